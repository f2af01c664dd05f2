// Command logdex indexes log directories and searches them: from the
// command line with grep's output, or as an HTTP service with a web UI.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
