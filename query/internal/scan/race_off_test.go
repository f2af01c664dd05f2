//go:build !race

package scan

const raceScale = 1
