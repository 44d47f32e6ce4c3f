//go:build !race

package eval

const raceOn = false
