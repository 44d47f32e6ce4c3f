package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/config"
)

// TestAnotherOwnersStoreRefused (issue 27 point 2): on a shared store
// (scripts/pg-test) the first homard to open it makes it its owner's; a
// home of another owner on the same schema is refused at Open, with what
// to do, and doctor's inspection reads without claiming. Its twins: a
// second home of the same owner (a replica) opens; a SQLite file records
// no owner at all (it is its home's).
func TestAnotherOwnersStoreRefused(t *testing.T) {
	first := newTestRuntime(t, "smart")
	ctx := context.Background()
	holder, err := first.Store.StoreOwner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Store.Shared() {
		if holder != "" {
			t.Errorf("a SQLite home recorded store owner %q; want none", holder)
		}
		return
	}
	if holder != first.Config.Owner {
		t.Fatalf("store owner after the first Open = %q; want %q", holder, first.Config.Owner)
	}
	home := func(owner string) config.Paths {
		paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Init(ctx, paths, config.InitOptions{StoreURL: first.Config.Store.URL}); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			b, err := os.ReadFile(paths.ConfigFile)
			if err != nil {
				t.Fatal(err)
			}
			out := regexp.MustCompile(`(?m)^owner = .*$`).ReplaceAll(b, []byte(`owner = "`+owner+`"`))
			if bytes.Equal(out, b) {
				t.Fatalf("no owner line in the new config:\n%s", b)
			}
			if err := os.WriteFile(paths.ConfigFile, out, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return paths
	}
	bobs := home("bob")
	if r, err := Open(ctx, bobs, Options{}); !errors.Is(err, ErrAnotherOwnersStore) || !strings.Contains(err.Error(), "schema of their own") {
		if err == nil {
			r.Close()
		}
		t.Fatalf("bob's home on the owner's schema: Open = %v; want ErrAnotherOwnersStore saying what to do", err)
	}
	if _, err := Acknowledge(ctx, bobs, ""); !errors.Is(err, ErrAnotherOwnersStore) {
		t.Errorf("doctor --ack from bob's home = %v; want ErrAnotherOwnersStore", err)
	}
	replica, err := Open(ctx, home(""), Options{})
	if err != nil {
		t.Fatalf("a second home of the same owner: %v", err)
	}
	replica.Close()
}
