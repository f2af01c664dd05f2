// Command logdex indexes log directories and searches them: from the
// command line with grep's output, or as an HTTP service with a web UI.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, exitsAfter: true}
	// LOGDEX_CPUPROFILE=file profiles any command (for performance work).
	if p := os.Getenv("LOGDEX_CPUPROFILE"); p != "" {
		f, err := os.Create(p)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			code := e.run(os.Args[1:])
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
		fmt.Fprintln(os.Stderr, "logdex: cannot write CPU profile:", err)
	}
	os.Exit(e.run(os.Args[1:]))
}
