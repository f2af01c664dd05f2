//go:build race

package compressed

// The race detector slows decompressing about tenfold (xz most: a long
// run's 600 flips of a 2 MiB xz file took some 20 minutes per xz case); long runs
// then try a quarter of their cases.
const raceScale = 4
