package arbiter_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/secrets"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
)

// emit is a read-only test tool returning a fixed result; it records the
// caller it found in the context at Prepare and at Run.
type emit struct {
	name       string
	res        tool.Result
	noArtifact bool
	seen       *[]tool.Caller
}

type emitParams struct{}

func (e emit) Spec() tool.Spec {
	return tool.Spec{Name: e.name, Description: "test tool", Action: policy.ActionRead, Risk: policy.RiskLow,
		ReadOnly: true, NoArtifact: e.noArtifact}
}

func (e emit) Prepare(ctx context.Context, _ emitParams) (tool.Plan, error) {
	c, _ := tool.CallerFrom(ctx)
	*e.seen = append(*e.seen, c)
	return tool.NewPlan(tool.PlanSpec{Tool: e.name, Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true,
		Display: "emit", Body: struct{}{}})
}

func (e emit) Run(ctx context.Context, _ tool.Plan) (tool.Result, error) {
	c, _ := tool.CallerFrom(ctx)
	*e.seen = append(*e.seen, c)
	return e.res, nil
}

const testSecret = "zebraARTIFACTSECRET0123456789"

// newEmitArbiter builds an arbiter over a real store with one emit tool.
func newEmitArbiter(t *testing.T, e emit, o arbiter.Options) (*arbiter.Arbiter, *store.Store) {
	t.Helper()
	st := storetest.Open(t)
	reg, err := tool.NewRegistry(tool.Adapt[emitParams](e))
	if err != nil {
		t.Fatal(err)
	}
	o.Registry, o.Store, o.Approvals, o.Redactor = reg, st, approval.New(st, approval.Options{}), secrets.NewRedactor(testSecret)
	o.Mode = policy.ModeSafe
	return arbiter.New(o), st
}

var noteRE = regexp.MustCompile(`\n\[homard: result is (\d+) characters; stored as artifact (art_[0-9a-f]{16}); read more with read_artifact\{"id":"(art_[0-9a-f]{16})","offset":1500,"limit":(\d+)\}\]$`)

func TestLongResultsBecomeArtifacts(t *testing.T) {
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s1"}
	cjk := func(n int) string { return strings.Repeat("猫", n) }
	cases := []struct {
		name         string
		text         string
		untrusted    bool
		noArtifact   bool
		o            arbiter.Options
		wantArtifact bool
	}{
		{name: "at the threshold stays whole", text: cjk(arbiter.DefaultArtifactChars)},
		{name: "one rune over becomes an artifact", text: cjk(arbiter.DefaultArtifactChars + 1), wantArtifact: true},
		{name: "untrusted flag kept", text: cjk(9000), untrusted: true, wantArtifact: true},
		{name: "runes not bytes: 5000 four-byte runes stay whole", text: strings.Repeat("😀", 5000)},
		{name: "negative threshold turns artifacts off", text: cjk(20000), o: arbiter.Options{ArtifactChars: -1}},
		{name: "paged tools are never artifacted", text: cjk(20000), noArtifact: true},
		{name: "custom threshold", text: "x" + strings.Repeat("y", 2000), o: arbiter.Options{ArtifactChars: 2000}, wantArtifact: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seen []tool.Caller
			arb, st := newEmitArbiter(t, emit{name: "emit", res: tool.Result{Text: c.text, Untrusted: c.untrusted},
				noArtifact: c.noArtifact, seen: &seen}, c.o)
			out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "emit", Args: json.RawMessage(`{}`), Caller: me})
			if err != nil || out.Decision != arbiter.Ran {
				t.Fatalf("Decide = %+v, %v; want ran", out, err)
			}
			if out.Result.Untrusted != c.untrusted {
				t.Errorf("result Untrusted = %v; want %v", out.Result.Untrusted, c.untrusted)
			}
			if !c.wantArtifact {
				if out.Artifact != "" || out.Result.Text != c.text {
					t.Fatalf("artifact %q, %d-byte text; want the whole %d-byte result and no artifact", out.Artifact, len(out.Result.Text), len(c.text))
				}
				return
			}
			m := noteRE.FindStringSubmatch(out.Result.Text)
			if m == nil {
				t.Fatalf("result does not end with the artifact note: …%q", out.Result.Text[max(0, len(out.Result.Text)-300):])
			}
			if m[2] != out.Artifact || m[3] != out.Artifact {
				t.Errorf("note names %s/%s; Outcome.Artifact = %s", m[2], m[3], out.Artifact)
			}
			total := utf8.RuneCountInString(c.text)
			if m[1] != strconv.Itoa(total) {
				t.Errorf("note says %s characters; want %d", m[1], total)
			}
			preview := strings.TrimSuffix(out.Result.Text, m[0])
			if want := string([]rune(c.text)[:1500]); preview != want {
				t.Errorf("preview is %d runes %q…; want the first 1500 runes", utf8.RuneCountInString(preview), preview[:min(20, len(preview))])
			}
			art, err := st.Artifact(context.Background(), out.Artifact)
			if err != nil {
				t.Fatalf("artifact %s not stored: %v", out.Artifact, err)
			}
			if art.Text != c.text || art.Owner != "me" || art.Session != "s1" || art.Tool != "emit" || art.Untrusted != c.untrusted {
				t.Errorf("stored artifact owner=%s session=%s tool=%s untrusted=%v, %d bytes; want me/s1/emit/%v, %d bytes",
					art.Owner, art.Session, art.Tool, art.Untrusted, len(art.Text), c.untrusted, len(c.text))
			}
			// Written with the ToolRun and its audit record: the run
			// exists and holds what the model got, not the whole text.
			run, err := st.GetToolRun(context.Background(), out.RunID)
			if err != nil || art.ToolRun != out.RunID || run.Result != out.Result.Text {
				t.Errorf("artifact run %q, outcome run %q (%v); the run must hold the preview", art.ToolRun, out.RunID, err)
			}
		})
	}
}

func TestArtifactHoldsNoSecretAndIsCapped(t *testing.T) {
	var seen []tool.Caller
	text := strings.Repeat("a", 3000) + " key " + testSecret + " and sk-proj-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA " + strings.Repeat("b", 30000)
	arb, st := newEmitArbiter(t, emit{name: "emit", res: tool.Result{Text: text}, seen: &seen},
		arbiter.Options{MaxArtifactBytes: 20000})
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s1"}
	out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "emit", Args: json.RawMessage(`{}`), Caller: me})
	if err != nil || out.Artifact == "" {
		t.Fatalf("Decide = %+v, %v; want an artifact", out, err)
	}
	art, err := st.Artifact(context.Background(), out.Artifact)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{testSecret, "sk-proj-AAAA"} {
		if strings.Contains(art.Text, secret) || strings.Contains(out.Result.Text, secret) {
			t.Errorf("secret %q reached the artifact or the preview", secret)
		}
	}
	if !strings.Contains(art.Text, " key ") || !strings.HasSuffix(art.Text, "bytes shown]") || len(art.Text) > 20100 {
		t.Errorf("artifact is %d bytes ending %q; want the redacted text cut near 20000 bytes with a marker", len(art.Text), art.Text[len(art.Text)-40:])
	}

	// The caller reached the tool through the context at Prepare and Run.
	want := tool.Caller{Owner: "me", Session: "s1", Trust: policy.TrustOwner, Mode: policy.ModeSafe}
	if len(seen) != 2 || seen[0] != want || seen[1] != want {
		t.Errorf("callers seen by the tool = %+v; want %+v at Prepare and at Run", seen, want)
	}
}

// TestWholeAndFileResults: a tool that capped its own result (a page
// snapshot) hands the whole as Result.Whole — kept redacted as the
// caller's artifact, named in a note after the capped text; a binary
// result (a screenshot) is kept with its type and bytes and the model gets
// only a note, never the bytes. The twin: a short result with neither
// keeps nothing.
func TestWholeAndFileResults(t *testing.T) {
	me := arbiter.Caller{Owner: "me", Trust: policy.TrustOwner, Session: "s1"}
	decide := func(t *testing.T, res tool.Result) (arbiter.Outcome, *store.Store) {
		t.Helper()
		var seen []tool.Caller
		arb, st := newEmitArbiter(t, emit{name: "emit", res: res, seen: &seen}, arbiter.Options{})
		out, err := arb.Decide(context.Background(), arbiter.Proposal{Tool: "emit", Args: json.RawMessage(`{}`), Caller: me})
		if err != nil {
			t.Fatal(err)
		}
		return out, st
	}
	out, st := decide(t, tool.Result{Text: "page (cut)", Whole: "page and all the rest; token " + testSecret, Untrusted: true})
	art, err := st.Artifact(context.Background(), out.Artifact)
	if err != nil || art.Owner != "me" || art.Session != "s1" || !art.Untrusted || !strings.HasPrefix(art.Text, "page and all the rest") || strings.Contains(art.Text, testSecret) {
		t.Fatalf("whole kept as %+v, %v; want the caller's untrusted artifact, redacted", art, err)
	}
	if !strings.HasPrefix(out.Result.Text, "page (cut)\n[homard: the whole result is") || !strings.Contains(out.Result.Text, out.Artifact) || out.Result.Whole != "" {
		t.Errorf("model reads %q; want the capped text and a note naming %s", out.Result.Text, out.Artifact)
	}

	png := []byte("\x89PNG\r\n\x1a\n\x00\x01binary")
	out, st = decide(t, tool.Result{Text: "screenshot of https://news.example/", File: &tool.File{Name: "screenshot.png", MIME: "image/png", Data: png}})
	art, err = st.Artifact(context.Background(), out.Artifact)
	if err != nil || art.MIME != "image/png" || string(art.Data) != string(png) || art.Text != "" {
		t.Fatalf("file kept as %+v, %v; want the PNG's bytes", art, err)
	}
	if strings.Contains(out.Result.Text, "PNG") || !strings.Contains(out.Result.Text, "you cannot read it") || out.Result.File != nil {
		t.Errorf("model reads %q (file %v); want a note, not the bytes", out.Result.Text, out.Result.File)
	}

	if out, _ := decide(t, tool.Result{Text: "short"}); out.Artifact != "" || out.Result.Text != "short" {
		t.Errorf("a short plain result: %+v; want no artifact", out)
	}
}
