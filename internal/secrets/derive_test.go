package secrets

import (
	"bytes"
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDerivedKey(t *testing.T) {
	v, path, keyPath := openTestVault(t)
	a, err := v.DerivedKey("tasks")
	if err != nil {
		t.Fatalf("DerivedKey(tasks): %v", err)
	}
	if len(a) != 32 {
		t.Fatalf("DerivedKey(tasks) has %d bytes; want 32", len(a))
	}
	// The same vault, reopened from its key file, gives the same key.
	v2, err := OpenVault(path, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	again, err := v2.DerivedKey("tasks")
	if err != nil || !bytes.Equal(a, again) {
		t.Errorf("reopened vault: DerivedKey(tasks) = %x, %v; want %x", again, err, a)
	}
	// It is HKDF-SHA-256 of the key file with info homard/tasks, and not
	// the vault key itself.
	master, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	want, err := hkdf.Key(sha256.New, master, nil, "homard/tasks", 32)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, want) {
		t.Errorf("DerivedKey(tasks) = %x; want HKDF-SHA-256(vault key, info homard/tasks) = %x", a, want)
	}
	if bytes.Equal(a, master) {
		t.Error("DerivedKey(tasks) returned the vault key itself")
	}
	// Another purpose gives another key.
	other, err := v.DerivedKey("tasks2")
	if err != nil || bytes.Equal(a, other) {
		t.Errorf("DerivedKey(tasks2) = %x, %v; want a key other than tasks' %x", other, err, a)
	}
	// Another vault gives another key for the same purpose.
	dir := t.TempDir()
	v3, err := OpenVault(filepath.Join(dir, "vault.json"), filepath.Join(dir, "vault.key"))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := v3.DerivedKey("tasks")
	if err != nil || bytes.Equal(a, foreign) {
		t.Errorf("another vault: DerivedKey(tasks) = %x, %v; want a key other than %x", foreign, err, a)
	}
}

func TestDerivedKeyRejectsPurposes(t *testing.T) {
	v, _, _ := openTestVault(t)
	for _, p := range []string{"", "Tasks", "a/b", "tasks\x00", "tâches", string(make([]byte, 65))} {
		if k, err := v.DerivedKey(p); !errors.Is(err, ErrKeyPurpose) || k != nil {
			t.Errorf("DerivedKey(%q) = %x, %v; want ErrKeyPurpose", p, k, err)
		}
	}
	for _, p := range []string{"tasks", "a", "web.session-2_x"} {
		if _, err := v.DerivedKey(p); err != nil {
			t.Errorf("DerivedKey(%q): %v; want a key", p, err)
		}
	}
}
