//go:build !race

package main

// raceTest: this test binary runs under the race detector; the logdex it
// builds then does too.
const raceTest = false
