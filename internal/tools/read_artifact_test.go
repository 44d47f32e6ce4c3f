package tools

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

// artifactMap is an in-memory ArtifactSource; the store-backed one is
// tested end to end in internal/app.
type artifactMap map[string]Artifact

func (m artifactMap) Artifact(_ context.Context, id string) (Artifact, error) {
	a, ok := m[id]
	if !ok {
		return Artifact{}, ErrNoArtifact
	}
	return a, nil
}

func TestSliceRunesMatchesRuneSlicing(t *testing.T) {
	text := strings.Repeat("a猫😀é\n", 40) + "\xffz" // ASCII, 2-, 3-, 4-byte runes and an invalid byte
	runes := []rune(text)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		off, lim := rng.IntN(len(runes)+3), rng.IntN(60)
		got, n := sliceRunes(text, off, lim)
		want := ""
		if off < len(runes) {
			want = string(runes[off:min(off+lim, len(runes))])
		}
		// The one invalid byte comes back as itself; []rune made it U+FFFD.
		if n != len(runes) || strings.ToValidUTF8(got, "\uFFFD") != want {
			t.Fatalf("sliceRunes(%d, %d) = %q, %d; want %q, %d", off, lim, got, n, want, len(runes))
		}
	}
}

func TestReadArtifactRefusesWithoutLeaking(t *testing.T) {
	src := artifactMap{
		"art_mine": {ID: "art_mine", Owner: "alice", Session: "dm", Text: strings.Repeat("x", 100)},
		"art_bob":  {ID: "art_bob", Owner: "bob", Session: "dm", Text: "bob's"},
	}
	ra := NewReadArtifact(src)
	prepare := func(ctx context.Context, id string) error {
		_, err := ra.Prepare(ctx, ReadArtifactParams{ID: id})
		return err
	}
	at := func(c tool.Caller) context.Context { return tool.WithCaller(context.Background(), c) }
	owner := tool.Caller{Owner: "alice", Session: "dm", Trust: policy.TrustOwner}
	if err := prepare(at(owner), "art_mine"); err != nil {
		t.Fatalf("owner reading own artifact: %v", err)
	}
	// Owner trust may read from another session of theirs.
	if err := prepare(at(tool.Caller{Owner: "alice", Session: "other", Trust: policy.TrustOwner}), "art_mine"); err != nil {
		t.Fatalf("owner reading own artifact from another session: %v", err)
	}
	refusals := []struct {
		name string
		ctx  context.Context
		id   string
	}{
		{"no caller", context.Background(), "art_mine"},
		{"another owner's", at(owner), "art_bob"},
		{"missing", at(owner), "art_nope"},
		{"guest trust in another session (group chat)", at(tool.Caller{Owner: "alice", Session: "group", Trust: policy.TrustGuest}), "art_mine"},
	}
	var reasons []string
	for _, r := range refusals {
		var ref *tool.Refusal
		if err := prepare(r.ctx, r.id); !errors.As(err, &ref) || ref.Rule != "limit.artifact" {
			t.Errorf("%s: Prepare = %v; want a limit.artifact refusal", r.name, err)
			continue
		}
		if r.name != "no caller" {
			reasons = append(reasons, strings.ReplaceAll(errString(prepare(r.ctx, r.id)), r.id, "ID"))
		}
	}
	for _, r := range reasons[1:] {
		if r != reasons[0] {
			t.Errorf("refusals differ, so ids can be probed: %q vs %q", r, reasons[0])
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReadArtifactRefusesAFile: a binary artifact (a screenshot) is the
// owner's to see, not text for the model: read_artifact says so; the
// twin, a text artifact of the same owner, reads.
func TestReadArtifactRefusesAFile(t *testing.T) {
	ra := NewReadArtifact(artifactMap{
		"art_png": {ID: "art_png", Owner: "alice", Session: "dm", MIME: "image/png"},
		"art_txt": {ID: "art_txt", Owner: "alice", Session: "dm", Text: "page text"},
	})
	ctx := tool.WithCaller(context.Background(), tool.Caller{Owner: "alice", Session: "dm", Trust: policy.TrustOwner})
	var ae *tool.ArgError
	if _, err := ra.Prepare(ctx, ReadArtifactParams{ID: "art_png"}); !errors.As(err, &ae) || !strings.Contains(err.Error(), "image/png") {
		t.Errorf("read_artifact of a PNG: %v; want an argument error naming its type", err)
	}
	if _, err := ra.Prepare(ctx, ReadArtifactParams{ID: "art_txt"}); err != nil {
		t.Errorf("read_artifact of text: %v", err)
	}
}
