//go:build race

package compressed

// The race detector slows decompressing about tenfold (xz most: a long
// run's 600 flips of a 2 MiB xz file took 20 minutes each way); long runs
// then try a quarter of their cases.
const raceScale = 4
