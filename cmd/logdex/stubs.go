package main

import "fmt"

func (e *env) serve(args []string) int  { fmt.Fprintln(e.stderr, "serve: not yet"); return 2 }
func (e *env) status(args []string) int { fmt.Fprintln(e.stderr, "status: not yet"); return 2 }
func (e *env) check(args []string) int  { fmt.Fprintln(e.stderr, "check: not yet"); return 2 }
