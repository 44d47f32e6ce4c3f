package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/tool"
)

//go:embed read_artifact.md
var readArtifactDoc string

// Limits of read_artifact, in characters (runes). The largest page, at four
// bytes a rune plus its note, stays under the arbiter's 64 KiB result cap;
// the tool is marked NoArtifact so a page is never stored again.
const (
	artifactDefaultLimit = 6000
	artifactMaxLimit     = 16000
)

// ErrNoArtifact is what an ArtifactSource returns for an id it does not
// hold.
var ErrNoArtifact = errors.New("no such artifact")

// Artifact is what read_artifact needs of a stored artifact.
type Artifact struct {
	ID        string
	Owner     string
	Session   string
	Untrusted bool
	Text      string
	// MIME is a binary artifact's media type (a screenshot, a download):
	// the owner's to see, never the model's to read. "" for text.
	MIME string
}

// ArtifactSource looks artifacts up by id, returning ErrNoArtifact for an
// unknown one. It does not check who asks; read_artifact does.
type ArtifactSource interface {
	Artifact(ctx context.Context, id string) (Artifact, error)
}

// ReadArtifactParams are read_artifact's arguments.
type ReadArtifactParams struct {
	ID     string `json:"id"`
	Offset int    `json:"offset,omitempty" jsonschema:"first character, from 0"`
	Limit  int    `json:"limit,omitempty" jsonschema:"default 6000, maximum 16000"`
}

// ReadArtifact is the read_artifact tool.
type ReadArtifact struct{ src ArtifactSource }

// NewReadArtifact returns read_artifact over src.
func NewReadArtifact(src ArtifactSource) tool.Tool {
	return tool.Adapt[ReadArtifactParams](&ReadArtifact{src: src})
}

type readArtifactBody struct {
	ID     string `json:"id"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (t *ReadArtifact) Spec() tool.Spec {
	return tool.Spec{Name: "read_artifact", Description: doc(readArtifactDoc), Action: policy.ActionRead,
		Risk: policy.RiskLow, ReadOnly: true, NoArtifact: true}
}

// Prepare checks that the caller may read the artifact; a limit outside
// 1..16000 is clamped (0 means 6000).
func (t *ReadArtifact) Prepare(ctx context.Context, p ReadArtifactParams) (tool.Plan, error) {
	if p.Offset < 0 {
		return tool.Plan{}, tool.InvalidArgs("offset %d is negative; offsets count characters from 0", p.Offset)
	}
	if p.Limit < 0 {
		return tool.Plan{}, tool.InvalidArgs("limit %d is negative; leave it out for %d characters", p.Limit, artifactDefaultLimit)
	}
	a, err := t.lookup(ctx, p.ID)
	if err != nil {
		return tool.Plan{}, err
	}
	if a.MIME != "" {
		return tool.Plan{}, tool.InvalidArgs("artifact %s is a %s file (a screenshot or a download) kept for the owner to see; it cannot be read as text", a.ID, a.MIME)
	}
	total := runeCount(a.Text)
	if p.Offset > 0 && p.Offset >= total {
		return tool.Plan{}, tool.InvalidArgs("artifact %s has %d characters; offset %d is past the end", a.ID, total, p.Offset)
	}
	body := readArtifactBody{ID: a.ID, Offset: p.Offset, Limit: p.Limit}
	if body.Limit == 0 {
		body.Limit = artifactDefaultLimit
	}
	body.Limit = min(body.Limit, artifactMaxLimit)
	return t.Spec().Plan(tool.PlanSpec{
		Display: fmt.Sprintf("read artifact %s (characters %d-%d of %d)", a.ID, body.Offset, min(body.Offset+body.Limit, total)-1, total),
		Body:    body,
	})
}

func (t *ReadArtifact) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	var b readArtifactBody
	if err := plan.Decode(&b); err != nil {
		return tool.Result{}, err
	}
	// Looked up and checked again: Run trusts nothing Prepare saw.
	a, err := t.lookup(ctx, b.ID)
	var ref *tool.Refusal
	if errors.As(err, &ref) {
		return tool.Errorf("refused: %s", ref.Reason), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	text, total := sliceRunes(a.Text, b.Offset, b.Limit)
	end := b.Offset + runeCount(text) // exclusive
	var out strings.Builder
	out.WriteString(text)
	if end < total {
		fmt.Fprintf(&out, "\n[artifact %s: characters %d-%d of %d shown (offsets count characters from 0); read on with read_artifact{\"id\":%q,\"offset\":%d,\"limit\":%d}]",
			a.ID, b.Offset, end-1, total, a.ID, end, min(b.Limit, total-end))
	} else {
		fmt.Fprintf(&out, "\n[artifact %s: characters %d-%d of %d shown; this is the end]", a.ID, b.Offset, end-1, total)
	}
	return tool.Result{Text: out.String(), Untrusted: a.Untrusted}, nil
}

// lookup returns the artifact if the caller in ctx may read it: their own,
// and, for a caller below owner trust (a group chat), only one made in the
// same session, so a chat never reads what the owner's private session
// stored. A missing artifact and somebody else's get the same Refusal, so
// ids cannot be probed.
func (t *ReadArtifact) lookup(ctx context.Context, id string) (Artifact, error) {
	c, ok := tool.CallerFrom(ctx)
	if !ok {
		return Artifact{}, tool.Refuse(policy.RuleLimitArtifact, "read_artifact does not know who is asking; refusing")
	}
	denied := tool.Refuse(policy.RuleLimitArtifact,
		"artifact %q does not exist or is not yours; use an id from a result in this conversation", cleanID(id))
	a, err := t.src.Artifact(ctx, id)
	if errors.Is(err, ErrNoArtifact) {
		return Artifact{}, denied
	}
	if err != nil {
		return Artifact{}, fmt.Errorf("read artifact %s: %w", cleanID(id), err)
	}
	if a.Owner != c.Owner || (c.Trust != policy.TrustOwner && a.Session != c.Session) {
		return Artifact{}, denied
	}
	return a, nil
}

// cleanID shows a model-sent id safely: quoted by the callers, cut if long.
func cleanID(id string) string { return truncate(id, 64) }

// runeCount counts characters the way sliceRunes does: each invalid byte
// is one.
func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}

// sliceRunes returns up to limit runes of s starting at rune offset, and
// the number of runes in s. It never cuts inside a rune.
func sliceRunes(s string, offset, limit int) (string, int) {
	start, end, n := len(s), len(s), 0
	for i := range s {
		if n == offset {
			start = i
		}
		if n == offset+limit {
			end = i
		}
		n++
	}
	if offset >= n {
		start = len(s)
	}
	if offset+limit >= n {
		end = len(s)
	}
	return s[start:end], n
}
