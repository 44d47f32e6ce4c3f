package tools

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/homard/homard/internal/changeset"
	"strings"
	"testing"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/sandbox"
	"github.com/homard/homard/internal/tool"
)

// TestWriteAndEditPreviews: a write's card shows a unified diff against
// the file as it is (all "+" lines for a new file), an edit's the diff of
// the whole file; binary content is described, not shown; control
// characters stay in the preview as data (each surface shows them inert).
func TestWriteAndEditPreviews(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "notes/a.md", "one\ntwo\nthree\n")
	writeFile(t, e.root, "bin.dat", "\x00\x01\x02")
	for _, c := range []struct {
		name, tool, args string
		want             []string // lines the preview must hold, in order
		not              []string // substrings it must not hold
	}{
		{"new file", "write_file", `{"path":"notes/new.md","content":"hello\nworld\n"}`,
			[]string{"--- /dev/null", "+++ notes/new.md", "@@ -0,0 +1,2 @@", "+hello", "+world"}, nil},
		{"replace", "write_file", `{"path":"notes/a.md","content":"one\nTWO\nthree\n"}`,
			[]string{"--- notes/a.md", "+++ notes/a.md", "@@ -1,3 +1,3 @@", " one", "-two", "+TWO", " three"}, nil},
		{"same content", "write_file", `{"path":"notes/a.md","content":"one\ntwo\nthree\n"}`,
			[]string{"--- notes/a.md", "(no change: the file already holds exactly this content)"}, nil},
		{"empty new file", "write_file", `{"path":"e.md","content":""}`,
			[]string{"--- /dev/null", "+++ e.md", "(an empty file)"}, nil},
		{"binary new content", "write_file", `{"path":"b2.dat","content":"\u0000ok"}`,
			[]string{"--- /dev/null", fmt.Sprintf("+binary, 3 bytes, sha256 %x", sha256.Sum256([]byte("\x00ok")))}, []string{"ok"}},
		{"binary old content", "write_file", `{"path":"bin.dat","content":"text"}`,
			[]string{"--- bin.dat", fmt.Sprintf("-binary, 3 bytes, sha256 %x", sha256.Sum256([]byte("\x00\x01\x02"))),
				fmt.Sprintf("+binary, 4 bytes, sha256 %x", sha256.Sum256([]byte("text")))}, nil},
		{"content that looks like a diff", "write_file", `{"path":"fake.md","content":"--- a\n+++ b\n-rm -rf /\n ok"}`,
			[]string{"--- /dev/null", "+++ fake.md", "+--- a", "++++ b", "+-rm -rf /", "+ ok"}, nil},
		{"control characters", "write_file", `{"path":"esc.md","content":"a\u001b[2Jb\r\n"}`,
			[]string{"+a\x1b[2Jb\r"}, nil},
		{"edit", "edit_file", `{"path":"notes/a.md","old_text":"two","new_text":"2"}`,
			[]string{"--- notes/a.md", "+++ notes/a.md", " one", "-two", "+2", " three"}, nil},
		{"edit that cannot apply", "edit_file", `{"path":"notes/a.md","old_text":"four","new_text":"4"}`,
			[]string{"--- notes/a.md (old_text)", "+++ notes/a.md (new_text)", "-four", "+4",
				"(old_text occurs 0 times in the current file; the edit will fail unless that changes)"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.mustPrepare(t, c.tool, c.args)
			got := p.Preview()
			if !tool.IsDiff(got) {
				t.Errorf("preview is not a diff:\n%s", got)
			}
			at := 0
			lines := strings.Split(got, "\n")
			for _, w := range c.want {
				for at < len(lines) && lines[at] != w {
					at++
				}
				if at == len(lines) {
					t.Errorf("preview lacks line %q (in order):\n%s", w, got)
					break
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("preview holds %q:\n%s", n, got)
				}
			}
		})
	}
}

// TestPreviewFollowsTheFileNotTheHash: the diff is taken against the file
// when the card is drawn; the hash binds only what is written, so the
// same write has the same hash whatever the file held.
func TestPreviewFollowsTheFileNotTheHash(t *testing.T) {
	e := newEnv(t)
	const args = `{"path":"a.md","content":"new\n"}`
	before := e.mustPrepare(t, "write_file", args)
	shownBefore := before.Preview() // computed when first asked for: when the card is drawn
	writeFile(t, e.root, "a.md", "old\n")
	after := e.mustPrepare(t, "write_file", args)
	if before.Hash() != after.Hash() {
		t.Errorf("hash changed with the file: %s vs %s", before.Hash(), after.Hash())
	}
	if before.Preview() != shownBefore {
		t.Errorf("a Plan's preview changed after it was shown: %q, then %q", shownBefore, before.Preview())
	}
	if shownBefore == after.Preview() || !strings.Contains(after.Preview(), "\n-old\n+new") {
		t.Errorf("previews:\n%s\n---\n%s\nwant the second to replace old with new", before.Preview(), after.Preview())
	}
}

// TestCommandAndFetchPreviews: a command's card lists its exact argv, one
// quoted argument per line, its working folder and its view; a fetch's
// names the URL, the method and the secret by name only.
func TestCommandAndFetchPreviews(t *testing.T) {
	e := newEnv(t)
	writeFile(t, e.root, "src/x.txt", "x")
	rc := NewRunCommand(changeset.New(e.ws, changeset.Options{}), CommandOptions{Backend: func() (sandbox.Backend, error) { return sandbox.NewHost(), nil }})
	params, err := rc.Decode([]byte(`{"program":"ls","args":["-l","a b","x\"y","\u001b[31m"],"cwd":"src","stdin":"line1\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := rc.Prepare(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	got := plan.Preview()
	for _, w := range []string{"[1] \"-l\"\n", "[2] \"a b\"\n", `[3] "x\"y"` + "\n", `[4] "\x1b[31m"` + "\n",
		"working folder: src\n", "view: NOT confined", "stdin, 6 bytes:\nline1\n"} {
		if !strings.Contains(got, w) {
			t.Errorf("command preview lacks %q:\n%s", w, got)
		}
	}
	if tool.IsDiff(got) || strings.ContainsRune(got, 0x1b) {
		t.Errorf("command preview is a diff or holds a raw ESC:\n%s", got)
	}

	client, err := egress.New(egress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	web := NewWebTools(client, boundVault{}, "https://search.example/rss?q={query}")
	params, err = web[0].Decode([]byte(`{"url":"https://api.example.com/me?x=1","auth":"github"}`))
	if err != nil {
		t.Fatal(err)
	}
	if plan, err = web[0].Prepare(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	got = plan.Preview()
	for _, w := range []string{"method: GET\n", "url: https://api.example.com/me?x=1\n", "secret: github (its value is sent only to api.example.com"} {
		if !strings.Contains(got, w) {
			t.Errorf("fetch preview lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "Bearer") {
		t.Errorf("fetch preview holds the secret's value:\n%s", got)
	}
}

// TestOtherToolsPreviewTheirBody: a tool without its own preview shows
// its Plan's exact body.
func TestOtherToolsPreviewTheirBody(t *testing.T) {
	e := newEnv(t)
	p := e.mustPrepare(t, "list_dir", `{"path":"."}`)
	if got := p.Preview(); !strings.HasPrefix(got, "{\n  \"dir\": {") {
		t.Errorf("list_dir preview = %q; want its body indented", got)
	}
}
