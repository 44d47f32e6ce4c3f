//go:build unix

package config

import (
	"syscall"
	"testing"
)

// TestInitIgnoresUmask checks that the folder modes Init promises hold under
// a strict umask. It changes the process umask, so it must not run in
// parallel with tests that create files.
func TestInitIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	t.Cleanup(func() { syscall.Umask(old) })
	p := testPaths(t)
	if _, err := Init(p, InitOptions{}); err != nil {
		t.Fatalf("Init: %v", err)
	}
	checkMode(t, p.ConfigFile, 0o600)
	checkMode(t, p.DataDir, 0o700)
	checkMode(t, p.CheckpointDir, 0o700)
	checkMode(t, p.WorkspaceDir, 0o755)
}
