package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
)

// These tests drive artifacts end to end: the real read_file over os.Root,
// the arbiter, SQLite, and read_artifact over the store.

const artifactCanary = "zebraARTIFACTVAULT0123456789"

// newArtifactRuntime opens a home in mode whose guests may use guestTools,
// with artifactCanary stored in the vault (so the redactor knows it).
func newArtifactRuntime(t *testing.T, mode string, guestTools ...string) *Runtime {
	t.Helper()
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{Mode: mode}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(paths.ConfigFile)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := json.Marshal(append([]string{"current_time"}, guestTools...))
	s := strings.Replace(string(b), `guest_tools = ["current_time"]`, "guest_tools = "+string(list), 1)
	if err := os.WriteFile(paths.ConfigFile, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SecretSet(secrets.Secret{Name: "api", Hosts: []string{"api.example"}, Header: "X-Api-Key", Format: "{}"}, []byte(artifactCanary)); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r, err = Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// bigFile writes a file of at least minRunes characters of mixed ASCII,
// CJK and emoji, with a vault value and an API key planted before and after
// the preview, and returns read_file's expected output for it.
func bigFile(t *testing.T, r *Runtime, rel string, minRunes int) string {
	t.Helper()
	var file, out strings.Builder
	for i := 0; utf8.RuneCountInString(file.String()) < minRunes; i++ {
		line := fmt.Sprintf("line %d: 猫が窓辺で眠る 🐈 tea", i+1)
		if i == 3 || i == 400 {
			line += " token=" + artifactCanary + " key=sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		}
		file.WriteString(line + "\n")
		fmt.Fprintf(&out, "%6d\t%s\n", i+1, line)
	}
	writeWorkspaceFile(t, r, rel, file.String())
	return out.String()
}

var artifactNote = regexp.MustCompile(`\n\[homard: result is (\d+) characters; stored as artifact (art_[0-9a-f]{16}); read more with read_artifact\{"id":"art_[0-9a-f]{16}","offset":1500,"limit":6000\}\]$`)

// pageNote is the line read_artifact ends every page with.
var pageNote = regexp.MustCompile(`\n\[artifact art_[0-9a-f]{16}: characters \d+-\d+ of \d+ shown[^\n]*\]$`)

// readPage calls read_artifact and returns the page without its note.
func readPage(t *testing.T, r *Runtime, id string, offset, limit int) (string, Outcome) {
	t.Helper()
	out := call(t, r, CallRequest{Tool: "read_artifact", Args: fmt.Sprintf(`{"id":%q,"offset":%d,"limit":%d}`, id, offset, limit)})
	if out.Decision != arbiter.Ran || out.Result == nil || out.Result.IsError {
		t.Fatalf("read_artifact(%d, %d) = %s %s: %+v", offset, limit, out.Decision, out.Reason, out.Result)
	}
	loc := pageNote.FindStringIndex(out.Result.Text)
	if loc == nil {
		t.Fatalf("read_artifact result lacks its range note: …%q", out.Result.Text[max(0, len(out.Result.Text)-200):])
	}
	return out.Result.Text[:loc[0]], out
}

func TestLargeReadBecomesAnArtifact(t *testing.T) {
	r := newArtifactRuntime(t, "safe") // reads, read_artifact included, run unasked in safe mode
	ctx := context.Background()
	want := r.redactor.Redact(bigFile(t, r, "big.txt", 20000))
	wantRunes := []rune(want)

	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"big.txt"}`})
	wantDecision(t, out, "ran", "mode.safe")
	m := artifactNote.FindStringSubmatch(out.Result.Text)
	if m == nil || m[2] != out.Artifact {
		t.Fatalf("read_file result (artifact %q) does not end with the artifact note: …%q", out.Artifact, out.Result.Text[max(0, len(out.Result.Text)-300):])
	}
	if m[1] != fmt.Sprint(len(wantRunes)) {
		t.Errorf("note says %s characters; want %d", m[1], len(wantRunes))
	}
	preview := strings.TrimSuffix(out.Result.Text, m[0])
	if preview != string(wantRunes[:1500]) || !utf8.ValidString(preview) {
		t.Errorf("preview is not the first 1500 characters of the redacted output:\n%q", preview[:min(200, len(preview))])
	}
	if !out.Result.Untrusted {
		t.Error("preview of a file's content lost its untrusted flag")
	}

	art, err := r.Store.Artifact(ctx, out.Artifact)
	if err != nil {
		t.Fatalf("artifact %s: %v", out.Artifact, err)
	}
	if art.Text != want {
		t.Errorf("artifact text (%d bytes) is not the whole redacted read_file output (%d bytes)", len(art.Text), len(want))
	}
	if art.Owner != r.Config.Owner || art.Session != "cli" || art.Tool != "read_file" || !art.Untrusted || art.ToolRun != out.RunID {
		t.Errorf("artifact row %+v; want owner %s, session cli, read_file, untrusted, run %s", art, r.Config.Owner, out.RunID)
	}
	// A secret is nowhere: not in the artifact, not in the preview, not
	// anywhere in the database file.
	db, _ := os.ReadFile(r.Paths.DBFile)
	wal, _ := os.ReadFile(r.Paths.DBFile + "-wal")
	for _, secret := range []string{artifactCanary, "sk-proj-AAAA"} {
		if strings.Contains(art.Text, secret) || strings.Contains(out.Result.Text, secret) ||
			strings.Contains(string(db), secret) || strings.Contains(string(wal), secret) {
			t.Errorf("secret %q was stored or shown", secret)
		}
	}

	// read_artifact returns the exact slice, states the range, and is not
	// stored as an artifact again.
	page, pout := readPage(t, r, out.Artifact, 1500, 3000)
	if page != string(wantRunes[1500:4500]) {
		t.Errorf("read_artifact(1500, 3000) is not characters 1500-4499 of the artifact")
	}
	if !strings.HasSuffix(pout.Result.Text, fmt.Sprintf(`characters 1500-4499 of %d shown (offsets count characters from 0); read on with read_artifact{"id":%q,"offset":4500,"limit":3000}]`, len(wantRunes), out.Artifact)) {
		t.Errorf("page note = …%q", pout.Result.Text[len(page):])
	}
	if !pout.Result.Untrusted || pout.Artifact != "" {
		t.Errorf("read_artifact: untrusted %v, artifact %q; want untrusted and never re-stored", pout.Result.Untrusted, pout.Artifact)
	}
	page, pout = readPage(t, r, out.Artifact, 0, 100000) // clamped to 16000
	if page != string(wantRunes[:16000]) || pout.Artifact != "" {
		t.Errorf("read_artifact(0, 100000): %d characters, artifact %q; want the first 16000 and no new artifact", utf8.RuneCountInString(page), pout.Artifact)
	}
	page, pout = readPage(t, r, out.Artifact, len(wantRunes)-7, 0)
	if page != string(wantRunes[len(wantRunes)-7:]) || !strings.HasSuffix(pout.Result.Text, "this is the end]") {
		t.Errorf("last page = %q …%q; want the last 7 characters and an end note", page, pout.Result.Text[len(page):])
	}
	out = call(t, r, CallRequest{Tool: "read_artifact", Args: fmt.Sprintf(`{"id":%q,"offset":%d}`, out.Artifact, len(wantRunes))})
	wantDecision(t, out, "error", "args.invalid")
}

// TestArtifactPagesNeverSplitARune reads a CJK and emoji artifact in odd
// page sizes at odd offsets; every page is valid UTF-8 and the pages put
// together are the artifact.
func TestArtifactPagesNeverSplitARune(t *testing.T) {
	r := newArtifactRuntime(t, "safe")
	want := r.redactor.Redact(bigFile(t, r, "cjk.txt", 9000))
	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"cjk.txt"}`})
	if out.Artifact == "" || !utf8.ValidString(out.Result.Text) {
		t.Fatalf("read_file: artifact %q, valid UTF-8 %v", out.Artifact, utf8.ValidString(out.Result.Text))
	}
	var all strings.Builder
	for off, i := 0, 0; off < utf8.RuneCountInString(want); i++ {
		lim := []int{7, 1, 4999, 13}[i%4]
		page, _ := readPage(t, r, out.Artifact, off, lim)
		if !utf8.ValidString(page) || utf8.RuneCountInString(page) > lim {
			t.Fatalf("page at %d (limit %d) is %d characters, valid %v", off, lim, utf8.RuneCountInString(page), utf8.ValidString(page))
		}
		all.WriteString(page)
		off += lim
	}
	if all.String() != want {
		t.Fatal("the pages put together are not the artifact")
	}
}

// TestHostileArtifactReads: the model tries to read an artifact that is
// not its caller's. Every such read is refused with the same words as an
// id that does not exist, and audited.
func TestHostileArtifactReads(t *testing.T) {
	r := newArtifactRuntime(t, "yolo", "read_artifact") // guests may use read_artifact here
	ctx := context.Background()
	bigFile(t, r, "private.txt", 8000)
	out := call(t, r, CallRequest{Tool: "read_file", Args: `{"path":"private.txt"}`})
	id := out.Artifact
	if id == "" {
		t.Fatalf("no artifact from a large read: %+v", out)
	}
	args := fmt.Sprintf(`{"id":%q}`, id)
	decide := func(c arbiter.Caller, args string) Outcome {
		t.Helper()
		out, err := r.Arbiter.Decide(ctx, arbiter.Proposal{Tool: "read_artifact", Args: json.RawMessage(args), Caller: c})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	missing := decide(arbiter.Caller{Owner: r.Config.Owner, Trust: policy.TrustOwner, Session: "cli"}, `{"id":"art_0000000000000000"}`)
	wantDecision(t, missing, "denied", "limit.artifact")
	sameWords := func(name string, got Outcome) {
		t.Helper()
		wantDecision(t, got, "denied", "limit.artifact")
		if strings.ReplaceAll(got.Reason, id, "ID") != strings.ReplaceAll(missing.Reason, "art_0000000000000000", "ID") {
			t.Errorf("%s: reason %q differs from a missing id's %q; ids can be probed", name, got.Reason, missing.Reason)
		}
		if got.Result != nil && strings.Contains(got.Result.Text, "line 1:") {
			t.Errorf("%s: artifact content leaked", name)
		}
	}

	before := lastAuditSeq(t, r)
	sameWords("another owner", decide(arbiter.Caller{Owner: "mallory", Trust: policy.TrustOwner, Session: "m1"}, args))
	sameWords("a guest", call(t, r, CallRequest{Tool: "read_artifact", Args: args, As: "guest"}))
	sameWords("the owner's group chat", decide(arbiter.Caller{Owner: r.Config.Owner, Trust: policy.TrustGuest, Session: "group"}, args))
	wantDecision(t, call(t, r, CallRequest{Tool: "read_artifact", Args: args, As: "unknown"}), "denied", "trust.unknown")
	// Identity cannot be smuggled in the arguments.
	wantDecision(t, decide(arbiter.Caller{Owner: "mallory", Trust: policy.TrustOwner, Session: "m1"},
		fmt.Sprintf(`{"id":%q,"owner":%q}`, id, r.Config.Owner)), "error", "decode.strict")
	for _, bad := range []string{"", "art_", "' OR 1=1 --", id + " ", strings.ToUpper(id)} {
		got := decide(arbiter.Caller{Owner: r.Config.Owner, Trust: policy.TrustOwner, Session: "cli"}, fmt.Sprintf(`{"id":%q}`, bad))
		wantDecision(t, got, "denied", "limit.artifact")
	}
	if got := lastAuditSeq(t, r); got != before+10 {
		t.Errorf("audit grew by %d records; want one per proposal (10)", got-before)
	}

	// The owner, from another session, still reads their own.
	page := decide(arbiter.Caller{Owner: r.Config.Owner, Trust: policy.TrustOwner, Session: "later"}, args)
	wantDecision(t, page, "ran", "mode.yolo")
	if !strings.HasPrefix(page.Result.Text, "     1\tline 1:") {
		t.Errorf("owner's read = %q…", page.Result.Text[:min(40, len(page.Result.Text))])
	}
	if _, err := r.AuditVerify(ctx); err != nil {
		t.Fatalf("AuditVerify: %v", err)
	}
}

// TestRunHostileModelReadsForeignArtifact: in an agent turn the model gets
// a preview and an artifact id for a long read, then asks for another
// owner's artifact by its id. The turn sees a refusal, never the content,
// and what is stored of the turn is the preview.
func TestRunHostileModelReadsForeignArtifact(t *testing.T) {
	r := newArtifactRuntime(t, "smart")
	ctx := context.Background()
	const foreign, foreignText = "art_00000000deadbeef", "mallory's diary: the safe code is 4512"
	err := r.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.InsertArtifact(store.Artifact{ID: foreign, Owner: "mallory", Session: "m1", Tool: "read_file", Text: foreignText})
	})
	if err != nil {
		t.Fatal(err)
	}
	full := r.redactor.Redact(bigFile(t, r, "big.txt", 20000))
	srv := runServer(t, r,
		openAI(toolCall("call_1", "read_file", `{"path":"big.txt"}`)),
		openAI(toolCall("call_2", "read_artifact", `{"id":"`+foreign+`"}`)),
		openAI(llmtest.Turn{Text: []string{"done"}}),
	)
	if _, err := r.Run(ctx, RunRequest{Task: "Summarise big.txt"}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests; want 3", len(reqs))
	}
	msgs := requestMessages(t, reqs[1])
	preview, _ := msgs[len(msgs)-1].Content.(string)
	if !strings.Contains(preview, "[BEGIN_UNTRUSTED nonce=") || !strings.Contains(preview, "stored as artifact art_") ||
		!strings.Contains(preview, string([]rune(full)[:1500])) || strings.Contains(preview, string([]rune(full)[:1501])) {
		t.Fatalf("tool message after read_file is not the untrusted preview with a note:\n%.300s", preview)
	}
	msgs = requestMessages(t, reqs[2])
	refusal, _ := msgs[len(msgs)-1].Content.(string)
	if !strings.Contains(refusal, "decision: denied") || !strings.Contains(refusal, "does not exist or is not yours") {
		t.Errorf("tool message after read_artifact = %q; want a denial", refusal)
	}
	for i, rec := range reqs {
		if strings.Contains(string(rec.Body), "safe code") {
			t.Errorf("request %d carries the other owner's artifact", i)
		}
		if strings.Contains(string(rec.Body), artifactCanary) {
			t.Errorf("request %d carries a vault value", i)
		}
	}
	stored, err := r.Store.Messages(ctx, "cli")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range stored {
		if len(m.Content) > 8000 {
			t.Errorf("a stored %s message is %d bytes; the turn should keep the preview, not the whole result", m.Role, len(m.Content))
		}
	}
}
