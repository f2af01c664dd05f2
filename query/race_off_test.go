//go:build !race

package query

const raceScale = 1
