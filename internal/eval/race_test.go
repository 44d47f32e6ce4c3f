//go:build race

package eval

// raceOn: the race detector makes a run about fifteen times slower, so
// the whole-suite test runs a few scenarios under it.
const raceOn = true
