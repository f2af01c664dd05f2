//go:build race

package scan

// The race detector slows the matchers about tenfold: the long-line test
// then uses lines of a quarter of the size (still many buffers long).
const raceScale = 4
