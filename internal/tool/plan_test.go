package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/policy"
)

type writeBody struct {
	Path    string   `json:"path"`
	Content string   `json:"content"`
	Mode    int      `json:"mode"`
	Ratio   float64  `json:"ratio"`
	Tags    []string `json:"tags"`
}

// writeBodyReordered has the same JSON as writeBody with the fields
// declared in another order.
type writeBodyReordered struct {
	Tags    []string `json:"tags"`
	Ratio   float64  `json:"ratio"`
	Mode    int      `json:"mode"`
	Content string   `json:"content"`
	Path    string   `json:"path"`
}

func mustPlan(t testing.TB, s PlanSpec) Plan {
	t.Helper()
	p, err := NewPlan(s)
	if err != nil {
		t.Fatalf("NewPlan(%+v): %v", s, err)
	}
	return p
}

func baseSpec() PlanSpec {
	return PlanSpec{
		Tool: "write_file", Action: policy.ActionWrite, Risk: policy.RiskMedium,
		Display: "write notes/a.md", Targets: []string{"notes/a.md", "notes/b.md"},
		Body: writeBody{Path: "notes/a.md", Content: "hello <b>&</b>", Mode: 0o644, Ratio: 0.5, Tags: []string{"x"}},
	}
}

// TestPlanCanonicalForm pins the canonical form: changing it silently
// would invalidate every stored approval and audit hash.
func TestPlanCanonicalForm(t *testing.T) {
	p := mustPlan(t, baseSpec())
	want := `{"action":"write","body":{"content":"hello <b>&</b>","mode":420,"path":"notes/a.md","ratio":0.5,"tags":["x"]},` +
		`"read_only":false,"risk":"medium","targets":["notes/a.md","notes/b.md"],"tool":"write_file"}`
	if got := string(p.Canonical()); got != want {
		t.Errorf("Canonical() =\n %s\nwant\n %s", got, want)
	}
	sum := sha256.Sum256([]byte(want))
	if got := p.Hash(); got != hex.EncodeToString(sum[:]) {
		t.Errorf("Hash() = %s; want the SHA-256 of the canonical form", got)
	}
}

func TestPlanAccessors(t *testing.T) {
	s := baseSpec()
	s.Targets = []string{"b", "a", "b"}
	s.ReadOnly = true
	p := mustPlan(t, s)
	if p.Tool() != "write_file" || p.Action() != policy.ActionWrite || p.Risk() != policy.RiskMedium ||
		!p.ReadOnly() || p.Display() != "write notes/a.md" {
		t.Errorf("accessors = %q %q %v %v %q", p.Tool(), p.Action(), p.Risk(), p.ReadOnly(), p.Display())
	}
	if got := p.Targets(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Targets() = %v; want sorted, without duplicates", got)
	}
	// The Plan is immutable: changing what the accessors or the spec gave
	// out changes nothing.
	p.Targets()[0] = "zzz"
	p.Canonical()[0] = 'X'
	s.Targets[0] = "changed"
	if got := p.Targets(); got[0] != "a" {
		t.Errorf("Targets() after mutation = %v", got)
	}
	if got := p.Canonical(); got[0] != '{' {
		t.Errorf("Canonical() after mutation starts with %q", got[0])
	}
	if p.IsZero() || !(Plan{}).IsZero() {
		t.Errorf("IsZero: built %v, zero %v", p.IsZero(), (Plan{}).IsZero())
	}
}

// semanticKey is what a Plan means, computed without NewPlan: equal keys
// must give equal hashes and different keys different hashes.
func semanticKey(t testing.TB, s PlanSpec) string {
	t.Helper()
	targets := slices.Clone(s.Targets)
	slices.Sort(targets)
	targets = slices.Compact(targets)
	raw, err := json.Marshal(s.Body)
	if err != nil {
		t.Fatalf("marshal body: %v", err)
	}
	// Numbers compare as float64 values (5e-1 is 0.5); keys are sorted
	// when the map marshals.
	var body any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("decode body: %v", err)
	}
	norm, _ := json.Marshal(body)
	return fmt.Sprintf("%q|%q|%d|%v|%q|%s", s.Tool, s.Action, int(s.Risk), s.ReadOnly, targets, norm)
}

func TestPlanHashEqualIffEqual(t *testing.T) {
	base := baseSpec()
	b := base.Body.(writeBody)
	variants := map[string]PlanSpec{"base": base}
	add := func(name string, f func(*PlanSpec)) {
		s := base
		s.Targets = slices.Clone(base.Targets)
		f(&s)
		variants[name] = s
	}
	// Same meaning, produced differently.
	add("display changed", func(s *PlanSpec) { s.Display = "something else entirely" })
	add("targets reordered and repeated", func(s *PlanSpec) { s.Targets = []string{"notes/b.md", "notes/a.md", "notes/b.md"} })
	add("body as reordered struct", func(s *PlanSpec) {
		s.Body = writeBodyReordered{Tags: b.Tags, Ratio: b.Ratio, Mode: b.Mode, Content: b.Content, Path: b.Path}
	})
	add("body as map", func(s *PlanSpec) {
		s.Body = map[string]any{"tags": []string{"x"}, "ratio": 0.5, "mode": 420, "content": b.Content, "path": b.Path}
	})
	add("body as pointer", func(s *PlanSpec) { bb := b; s.Body = &bb })
	add("body as raw JSON", func(s *PlanSpec) {
		s.Body = json.RawMessage(`{ "tags":["x"], "path":"notes/a.md", "mode":420, "ratio":5e-1, "content":"hello \u003cb\u003e&</b>" }`)
	})
	// One thing changed.
	add("tool changed", func(s *PlanSpec) { s.Tool = "write_files" })
	add("action changed", func(s *PlanSpec) { s.Action = policy.ActionExec })
	add("risk changed", func(s *PlanSpec) { s.Risk = policy.RiskHigh })
	add("read-only changed", func(s *PlanSpec) { s.ReadOnly = true })
	add("target changed", func(s *PlanSpec) { s.Targets[1] = "notes/c.md" })
	add("target added", func(s *PlanSpec) { s.Targets = append(s.Targets, "notes/c.md") })
	add("targets empty", func(s *PlanSpec) { s.Targets = nil })
	add("body path changed", func(s *PlanSpec) { bb := b; bb.Path = "notes/A.md"; s.Body = bb })
	add("body content changed", func(s *PlanSpec) { bb := b; bb.Content += " "; s.Body = bb })
	add("body mode changed", func(s *PlanSpec) { bb := b; bb.Mode = 0o755; s.Body = bb })
	add("body ratio changed", func(s *PlanSpec) { bb := b; bb.Ratio = 0.5000000000000001; s.Body = bb })
	add("body tags reordered", func(s *PlanSpec) { bb := b; bb.Tags = []string{"x", "y"}; s.Body = bb })
	add("body nil", func(s *PlanSpec) { s.Body = nil })
	// Field boundaries cannot be shifted: "ab"+"c" differs from "a"+"bc".
	add("tool/action boundary", func(s *PlanSpec) { s.Tool = "write_filew"; s.Action = "rite" })

	names := make([]string, 0, len(variants))
	for n := range variants {
		names = append(names, n)
	}
	slices.Sort(names)
	hashes := make(map[string]string)
	keys := make(map[string]string)
	for _, n := range names {
		hashes[n] = mustPlan(t, variants[n]).Hash()
		keys[n] = semanticKey(t, variants[n])
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			if (hashes[a] == hashes[b]) != (keys[a] == keys[b]) {
				t.Errorf("%q vs %q: equal hashes %v, equal meaning %v", a, b, hashes[a] == hashes[b], keys[a] == keys[b])
			}
		}
	}
	// The test means something only if both kinds of pair occur.
	for _, n := range []string{"display changed", "targets reordered and repeated", "body as map", "body as raw JSON"} {
		if hashes[n] != hashes["base"] {
			t.Errorf("%q: hash differs from base", n)
		}
	}
}

func TestPlanDecodeReturnsTheBody(t *testing.T) {
	s := baseSpec()
	p := mustPlan(t, s)
	var got writeBody
	if err := p.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s.Body) {
		t.Errorf("Decode = %+v; want %+v", got, s.Body)
	}
	// Decoding a plan into a map gives the body, not the envelope.
	var m map[string]any
	if err := p.Decode(&m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["tool"]; ok || m["path"] != "notes/a.md" {
		t.Errorf("Decode into a map = %v; want the body only", m)
	}
	if err := (Plan{}).Decode(&got); err == nil {
		t.Error("Decode of the zero Plan succeeded; want an error")
	}
}

func TestPlanRejectsInexactNumbers(t *testing.T) {
	type body struct {
		N int64   `json:"n"`
		U uint64  `json:"u"`
		F float64 `json:"f"`
		G float32 `json:"g"`
	}
	tests := []struct {
		body any
		ok   bool
	}{
		{body{N: 1 << 53}, true},
		{body{N: -(1 << 53)}, true},
		{body{N: 1<<53 + 1}, false}, // would hash like 1<<53
		{body{N: math.MaxInt64}, false},
		{body{N: 1 << 60}, false}, // RFC 8785 prints 1152921504606847000
		{body{N: 1e15}, true},
		{body{U: math.MaxUint64}, false},
		{body{F: 0.1, G: 0.1}, true},
		{body{F: 1e300, G: 3.4e38}, true},
		{body{F: 5e-324, G: 1e-45}, true},
		{body{F: math.Copysign(0, -1)}, false}, // -0 would hash like 0
		{json.RawMessage(`{"n":1.0}`), true},   // a fraction keeps its float64 value
		{json.RawMessage(`{"n":-0.0}`), false}, // but not -0
		{json.RawMessage(`{"n":1}`), true},
		{json.RawMessage(`{"n":100000000000000000000000}`), false},
	}
	for _, tt := range tests {
		_, err := NewPlan(PlanSpec{Tool: "t", Action: policy.ActionRead, Risk: policy.RiskLow, Body: tt.body})
		if (err == nil) != tt.ok {
			t.Errorf("NewPlan(body %+v) error = %v; want ok=%v", tt.body, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "encode it as a string") {
			t.Errorf("NewPlan(body %+v) error = %q; want advice to encode it as a string", tt.body, err)
		}
	}
	if _, err := NewPlan(PlanSpec{Tool: "t", Body: math.NaN()}); err == nil {
		t.Error("NewPlan with a NaN body succeeded")
	}
	if _, err := NewPlan(PlanSpec{Tool: "t", Body: make(chan int)}); err == nil {
		t.Error("NewPlan with an unencodable body succeeded")
	}
}

// TestPlanPrivateResultNotHashed: PrivateResult follows from the Body (an
// http_get's credential), which the hash covers; it is carried, not hashed,
// so the canonical form of every stored approval stays as it was.
func TestPlanPrivateResultNotHashed(t *testing.T) {
	public := mustPlan(t, baseSpec())
	s := baseSpec()
	s.PrivateResult = true
	private := mustPlan(t, s)
	if public.PrivateResult() || !private.PrivateResult() {
		t.Fatalf("PrivateResult() = %v, %v; want false, true", public.PrivateResult(), private.PrivateResult())
	}
	if public.Hash() != private.Hash() || !slices.Equal(public.Canonical(), private.Canonical()) {
		t.Errorf("PrivateResult changed the canonical form:\n %s\n %s", public.Canonical(), private.Canonical())
	}
}

// TestPlanClassAndTemplate: a command Plan's class is hashed (in RFC 8785
// member order, between body and command); its template is carried, not
// hashed, and cannot be changed through a copy.
func TestPlanClassAndTemplate(t *testing.T) {
	s := PlanSpec{Tool: "run_command", Action: policy.ActionExec, Risk: policy.RiskMedium, Class: policy.ClassWrite,
		Command: []string{"/usr/bin/mkdir", "build"}, Targets: []string{"."}, Body: map[string]string{"a": "b"},
		Template: &policy.Template{Program: "/usr/bin/mkdir", Entry: "mkdir", Items: []policy.Item{{Kind: policy.ItemOperand, Value: "build", Slot: "."}}}}
	p := mustPlan(t, s)
	want := `{"action":"exec","body":{"a":"b"},"class":"write","command":["/usr/bin/mkdir","build"],` +
		`"read_only":false,"risk":"medium","targets":["."],"tool":"run_command"}`
	if got := string(p.Canonical()); got != want {
		t.Errorf("Canonical() =\n %s\nwant\n %s", got, want)
	}
	if p.Class() != policy.ClassWrite {
		t.Errorf("Class() = %v", p.Class())
	}
	s.Template.Items[0].Value = "changed"
	tm, ok := p.Template()
	if !ok || tm.Items[0].Value != "build" {
		t.Fatalf("Template() = %+v, %v; want the template as built", tm, ok)
	}
	tm.Items[0].Value = "changed again"
	if again, _ := p.Template(); again.Items[0].Value != "build" {
		t.Errorf("a copy changed the Plan's template")
	}
	s.Template = nil
	if q := mustPlan(t, s); q.Hash() != p.Hash() {
		t.Errorf("the template changed the hash")
	}
	if _, ok := mustPlan(t, baseSpec()).Template(); ok {
		t.Errorf("a Plan without a template has one")
	}
}

// TestSpecPlan: a Plan built from its tool's Spec is the Plan NewPlan
// builds with the Spec's name, action, risk and read-only flag; a PlanSpec
// may raise the risk but not lower it, and one that names the tool, the
// action or read-only again is an error.
func TestSpecPlan(t *testing.T) {
	spec := Spec{Name: "write_file", Action: policy.ActionWrite, Risk: policy.RiskMedium}
	s := baseSpec()
	want := mustPlan(t, s)
	s.Tool, s.Action, s.Risk = "", "", 0
	got, err := spec.Plan(s)
	if err != nil {
		t.Fatalf("Spec.Plan: %v", err)
	}
	if got.Hash() != want.Hash() || got.Tool() != want.Tool() || got.Action() != want.Action() ||
		got.Risk() != want.Risk() || got.ReadOnly() != want.ReadOnly() {
		t.Errorf("Spec.Plan = %s; want %s", got.Canonical(), want.Canonical())
	}
	ro := Spec{Name: "read_file", Action: policy.ActionRead, Risk: policy.RiskLow, ReadOnly: true}
	if p, err := ro.Plan(PlanSpec{Body: map[string]int{}}); err != nil || !p.ReadOnly() || p.Risk() != policy.RiskLow {
		t.Errorf("read-only Spec.Plan = %v, %v; want a low-risk read-only plan", p.Canonical(), err)
	}
	s.Risk = policy.RiskCritical
	want = mustPlan(t, PlanSpec{Tool: spec.Name, Action: spec.Action, Risk: policy.RiskCritical,
		Display: s.Display, Targets: s.Targets, Body: s.Body})
	if got, err := spec.Plan(s); err != nil || got.Hash() != want.Hash() || got.Risk() != policy.RiskCritical {
		t.Errorf("Spec.Plan raising the risk = %s, %v; want %s", got.Canonical(), err, want.Canonical())
	}
	for name, mod := range map[string]func(*PlanSpec){
		"tool":       func(p *PlanSpec) { p.Tool = "write_file" },
		"action":     func(p *PlanSpec) { p.Action = policy.ActionWrite },
		"lower risk": func(p *PlanSpec) { p.Risk = policy.RiskLow },
		"read-only":  func(p *PlanSpec) { p.ReadOnly = true },
	} {
		p := PlanSpec{Body: map[string]int{}}
		mod(&p)
		if _, err := spec.Plan(p); err == nil {
			t.Errorf("Spec.Plan with %s set: no error; want one", name)
		}
	}
}
