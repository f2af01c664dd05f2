// Command empty does nothing: the process section of logdex-bench times it
// as the floor of any Go process on the machine.
package main

func main() {}
