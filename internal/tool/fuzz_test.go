package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/homard/homard/internal/policy"
)

// fuzzParams covers every shape DecodeStrict walks. Optional slices and
// maps use omitzero so that re-encoding keeps an empty one empty.
type fuzzParams struct {
	Path  string         `json:"path"`
	N     int            `json:"n,omitempty"`
	F     float64        `json:"f,omitzero"`
	B     *bool          `json:"b"`
	Tags  []string       `json:"tags,omitzero"`
	Opts  *options       `json:"opts,omitempty"`
	Items []fuzzItem     `json:"items,omitzero"`
	M     map[string]int `json:"m,omitzero"`
	Pair  [2]int8        `json:"pair,omitzero"`
	Any   any            `json:"any,omitempty"`
	Common
}

type fuzzItem struct {
	ID  uint16   `json:"id"`
	Tag []string `json:"tag,omitzero"`
}

var fuzzLimits = Limits{MaxBytes: 4096, MaxString: 64, MaxItems: 16, MaxDepth: 6}

func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"path":"a"}`, `{"path":"notes.txt","PATH":"/etc/passwd"}`, `{"path":"a","path":"b"}`,
		`{"path":"a","m":{"s":1,"ſ":2}}`, `{"path":"a","m":{"k":1,"K":2}}`, `{"path":"a","Path":"b"}`,
		`{"path":"a","n":1,"f":1.5,"b":true,"tags":["x"],"opts":{"verbose":true,"depth":2},` +
			`"items":[{"id":1,"tag":[]}],"m":{"a":1},"pair":[1,-2],"any":{"x":[null,1,"s",{"y":false}]}}`,
		`{"path":"a","b":null,"opts":null}`, `{"path":"a","any":null}`, `{"path":"a"} x`, `{"path":"a"}{}`,
		`{"path":"\u00e9\ud800"}`, `{"path":"a","pair":[1]}`, `{"path":"a","n":1e3}`, `[{"path":"a"}]`,
		`{"path":"a","any":[[[[[[[[1]]]]]]]]}`, "{\"path\":\"\xff\"}", `{"path":"a","items":[{"id":70000}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p fuzzParams
		err := DecodeStrict(raw, &p, fuzzLimits)
		if err != nil {
			if !errors.Is(err, ErrArguments) {
				t.Fatalf("DecodeStrict(%q) = %v; want it to wrap ErrArguments", raw, err)
			}
			return
		}
		if dup := duplicateKey(raw); dup != "" {
			t.Fatalf("DecodeStrict accepted %q, which has the duplicate keys %s", raw, dup)
		}
		if !utf8.Valid(raw) {
			t.Fatalf("DecodeStrict accepted invalid UTF-8 %q", raw)
		}
		// What was accepted re-encodes to arguments that are accepted
		// again and decode to the same value.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", p, err)
		}
		var q fuzzParams
		if err := DecodeStrict(again, &q, Limits{MaxBytes: 1 << 20, MaxString: fuzzLimits.MaxString, MaxItems: fuzzLimits.MaxItems, MaxDepth: fuzzLimits.MaxDepth}); err != nil {
			t.Fatalf("DecodeStrict accepted %q but not its re-encoding %q: %v", raw, again, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("re-decoding changed the value:\n in    %q\n first %#v\n again %#v", raw, p, q)
		}
	})
}

// duplicateKey is an independent check: it reads raw with the standard
// decoder's token stream and reports, for any object, two keys that are
// equal or equal under Unicode case folding.
func duplicateKey(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var walk func() string
	walk = func() string {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		d, ok := tok.(json.Delim)
		if !ok {
			return ""
		}
		switch d {
		case '{':
			var keys []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return ""
				}
				k, _ := kt.(string)
				for _, prev := range keys {
					if strings.EqualFold(prev, k) {
						return fmt.Sprintf("%q and %q", prev, k)
					}
				}
				keys = append(keys, k)
				if dup := walk(); dup != "" {
					return dup
				}
			}
			dec.Token() // '}'
		case '[':
			for dec.More() {
				if dup := walk(); dup != "" {
					return dup
				}
			}
			dec.Token() // ']'
		}
		return ""
	}
	return walk()
}

type fuzzBody struct {
	S string   `json:"s"`
	N int64    `json:"n"`
	F float64  `json:"f"`
	G float32  `json:"g"`
	L []string `json:"l"`
}

// fuzzBodyReordered marshals to the same JSON with another field order.
type fuzzBodyReordered struct {
	L []string `json:"l"`
	G float32  `json:"g"`
	F float64  `json:"f"`
	N int64    `json:"n"`
	S string   `json:"s"`
}

func FuzzPlanHash(f *testing.F) {
	f.Add("read_file", "read", 1, true, "notes/a.md", "notes/b.md", "hello", int64(42), 0.5, float32(0.1), "display")
	f.Add("write_file", "write", 4, false, "a", "a", "", int64(1<<53), 1e300, float32(3.4e38), "")
	f.Add("t", "exec", 7, false, "", "x", "<&>\u2028", int64(-1), 5e-324, float32(1e-45), "d")
	f.Add("t", "fetch", 2, false, "b", "a", "\xff", int64(1<<53+1), math.Copysign(0, -1), float32(0), "")
	f.Fuzz(func(t *testing.T, tool, action string, risk int, readOnly bool, t1, t2, s string, n int64, fl float64, g float32, display string) {
		body := fuzzBody{S: s, N: n, F: fl, G: g, L: []string{t2, t1}}
		spec := PlanSpec{Tool: tool, Action: policy.Action(action), Risk: policy.Risk(risk), ReadOnly: readOnly,
			Display: display, Targets: []string{t1, t2}, Body: body}
		p, err := NewPlan(spec)
		if err != nil {
			if exactJSONNumbers(n, fl) {
				t.Fatalf("NewPlan(%+v) = %v; want success", spec, err)
			}
			return
		}
		if !exactJSONNumbers(n, fl) {
			t.Fatalf("NewPlan accepted n=%d f=%v, which RFC 8785 cannot keep exactly", n, fl)
		}

		// The same Plan produced differently hashes the same.
		same := []PlanSpec{spec, spec, spec, spec}
		same[0].Display = display + " (changed)"
		same[1].Targets = []string{t2, t1, t2, t1}
		same[2].Body = fuzzBodyReordered{S: s, N: n, F: fl, G: g, L: []string{t2, t1}}
		same[3].Body = map[string]any{"l": []string{t2, t1}, "g": g, "f": fl, "n": n, "s": s}
		for i, o := range same {
			if q := mustPlan(t, o); q.Hash() != p.Hash() {
				t.Fatalf("variant %d of an equal Plan hashes differently:\n %s\n %s", i, p.Canonical(), q.Canonical())
			}
		}

		// Changing any one field changes the hash.
		diff := map[string]PlanSpec{}
		put := func(name string, f func(*PlanSpec)) {
			o := spec
			o.Targets = slices.Clone(spec.Targets)
			f(&o)
			diff[name] = o
		}
		put("tool", func(o *PlanSpec) { o.Tool += "x" })
		put("action", func(o *PlanSpec) { o.Action += "x" })
		put("risk", func(o *PlanSpec) { o.Risk++ })
		put("read-only", func(o *PlanSpec) { o.ReadOnly = !o.ReadOnly })
		put("class", func(o *PlanSpec) { o.Class = policy.ClassRunsCode })
		put("target", func(o *PlanSpec) { o.Targets = []string{t1 + t2 + "/x"} })
		put("body string", func(o *PlanSpec) { b := body; b.S += "x"; o.Body = b })
		put("body list", func(o *PlanSpec) { b := body; b.L = []string{t1, t2, "x"}; o.Body = b })
		put("body int", func(o *PlanSpec) { b := body; b.N ^= 1; o.Body = b })
		if math.Abs(fl) < 1e300 {
			put("body float", func(o *PlanSpec) { b := body; b.F = fl*2 + 1; o.Body = b })
		}
		for name, o := range diff {
			q, err := NewPlan(o)
			if err != nil {
				continue // the change made a number inexact
			}
			if q.Hash() == p.Hash() {
				t.Fatalf("changing the %s left the hash unchanged:\n %s\n %s", name, p.Canonical(), q.Canonical())
			}
		}

		// Decode gives back exactly the body (strings are sent as UTF-8,
		// so only valid UTF-8 can come back unchanged).
		var got fuzzBody
		if err := p.Decode(&got); err != nil {
			t.Fatalf("Decode: %v", err)
		}
		if utf8.ValidString(s) && utf8.ValidString(t1) && utf8.ValidString(t2) && !reflect.DeepEqual(got, body) {
			t.Fatalf("Decode = %#v; want %#v", got, body)
		}
		if p.Tool() != tool || p.Display() != display || p.ReadOnly() != readOnly {
			t.Fatalf("accessors changed the spec")
		}
	})
}

// exactJSONNumbers says whether RFC 8785 keeps n and f exactly: n is
// printed as its float64's shortest digits, f is finite and not -0.
func exactJSONNumbers(n int64, f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 && math.Signbit(f) {
		return false
	}
	short, _ := json.Marshal(float64(n))
	return string(short) == fmt.Sprint(n)
}
