//go:build race

package scan

// The race detector slows the matchers about tenfold: the long-line test
// then uses lines of a quarter of the size (still many buffers long), and
// the property test a quarter of its patterns (all of them run without it).
const raceScale = 4
