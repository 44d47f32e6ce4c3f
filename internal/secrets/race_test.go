//go:build race

package secrets

// raceEnabled: the race detector makes sync.Pool (used by regexp) drop
// items, so allocation counts are not meaningful under -race.
const raceEnabled = true
