//go:build unix

package filelock

import (
	"path/filepath"
	"testing"
	"time"
)

// TestLockExcludes: a second Lock on the same file waits until the first
// is released (its twin: after the release it is taken at once).
func TestLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	release, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		r, err := Lock(path)
		if err != nil {
			t.Error(err)
			r = func() {}
		}
		got <- r
	}()
	select {
	case r := <-got:
		r()
		t.Fatal("a second Lock was taken while the first was held")
	case <-time.After(100 * time.Millisecond):
	}
	release()
	(<-got)()
}
