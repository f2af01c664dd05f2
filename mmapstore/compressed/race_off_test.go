//go:build !race

package compressed

const raceScale = 1
