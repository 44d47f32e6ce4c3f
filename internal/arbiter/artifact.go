package arbiter

import (
	"fmt"
	"unicode/utf8"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Artifact sizes, in characters (runes).
const (
	// DefaultArtifactChars is the longest result handed to the model whole
	// unless Options.ArtifactChars says otherwise.
	DefaultArtifactChars = 6000
	// PreviewChars is how much of a longer result the model sees at once;
	// read_artifact reads on from this offset.
	PreviewChars = 1500
	// artifactReadChars is the limit the note suggests for the next read:
	// read_artifact's default.
	artifactReadChars = 6000
)

// shape is stage 10 after redaction: it caps the (already redacted) result
// and, when it is longer than ArtifactChars, keeps it whole as an artifact
// written by finish in the audit transaction, and hands the model a preview
// and a note naming the artifact. The Untrusted and IsError flags stay on
// the preview and the artifact alike.
func (a *Arbiter) shape(c *call, res tool.Result) tool.Result {
	if res.File != nil {
		return a.keepFile(c, res)
	}
	if res.Whole != "" && !c.tool.Spec().NoArtifact {
		return a.keepWhole(c, res)
	}
	if a.o.ArtifactChars < 0 || c.tool.Spec().NoArtifact {
		res.Text = capText(res.Text, a.o.MaxResultBytes)
		return res
	}
	full := capText(res.Text, a.o.MaxArtifactBytes)
	n := utf8.RuneCountInString(full)
	if n <= a.o.ArtifactChars {
		res.Text = capText(full, a.o.MaxResultBytes)
		return res
	}
	id := newID("art_")
	c.artifact = &store.Artifact{
		ID: id, Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Tool: c.plan.Tool(),
		Untrusted: res.Untrusted, Text: full,
	}
	c.out.Artifact = id
	preview := min(PreviewChars, a.o.ArtifactChars)
	res.Text = capText(firstRunes(full, preview), a.o.MaxResultBytes) + fmt.Sprintf(
		"\n[homard: result is %d characters; stored as artifact %s; read more with read_artifact{\"id\":%q,\"offset\":%d,\"limit\":%d}]",
		n, id, id, preview, min(artifactReadChars, n-preview))
	return res
}

// firstRunes returns the first n runes of s.
func firstRunes(s string, n int) string {
	for i := range s { // i is the byte offset of each rune in turn
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// keepWhole keeps res.Whole (a result the tool capped itself: a page
// snapshot) as an artifact, redacted and capped like any result, and
// tells the model where the rest is.
func (a *Arbiter) keepWhole(c *call, res tool.Result) tool.Result {
	full := capText(a.o.Redactor.Redact(res.Whole), a.o.MaxArtifactBytes)
	id := newID("art_")
	c.artifact = &store.Artifact{
		ID: id, Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Tool: c.plan.Tool(),
		Untrusted: res.Untrusted, Text: full,
	}
	c.out.Artifact = id
	res.Whole = ""
	res.Text = capText(res.Text, a.o.MaxResultBytes) + fmt.Sprintf(
		"\n[homard: the whole result is %d characters, stored as artifact %s; read it with read_artifact{\"id\":%q}]",
		utf8.RuneCountInString(full), id, id)
	return res
}

// keepFile keeps res.File as a binary artifact (for the owner; the model
// cannot read it) and adds a note naming it to the (redacted) text.
func (a *Arbiter) keepFile(c *call, res tool.Result) tool.Result {
	f := res.File
	res.File, res.Whole = nil, ""
	if len(f.Data) > a.o.MaxArtifactBytes {
		res.Text = capText(res.Text, a.o.MaxResultBytes) + fmt.Sprintf("\n[homard: the %s file (%d bytes) is over the artifact limit of %d bytes and was not kept]", f.MIME, len(f.Data), a.o.MaxArtifactBytes)
		return res
	}
	id := newID("art_")
	c.artifact = &store.Artifact{
		ID: id, Owner: c.p.Caller.Owner, Session: c.p.Caller.Session, Tool: c.plan.Tool(),
		Untrusted: res.Untrusted, MIME: f.MIME, Name: f.Name, Data: f.Data,
	}
	c.out.Artifact = id
	res.Text = capText(res.Text, a.o.MaxResultBytes) + fmt.Sprintf(
		"\n[homard: stored as artifact %s (%s, %d bytes); the owner sees it in the web UI; you cannot read it]", id, f.MIME, len(f.Data))
	return res
}
