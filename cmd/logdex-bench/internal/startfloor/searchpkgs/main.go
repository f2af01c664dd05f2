// Command searchpkgs links logdex's search packages and does nothing: the
// process section of logdex-bench times it to show what starting a Go
// process that holds only them costs (their package initialisation and
// the runtime's start over their code), apart from what logdex's other
// packages and its work add.
package main

import (
	_ "github.com/logdex/logdex/indexer"
	_ "github.com/logdex/logdex/mmapstore"
	_ "github.com/logdex/logdex/query"
)

func main() {}
