//go:build race

package query

// The race detector slows searches about tenfold; property tests then run
// a quarter of their cases.
const raceScale = 4
