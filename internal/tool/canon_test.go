package tool

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// FuzzCanonicalMatchesJCS checks the hand-rolled canonicalizer against
// github.com/gowebpki/jcs, the reference it replaced on the hot path: on
// any JSON both accept, the bytes must be identical, and canonicalize may
// refuse only what RFC 8785 cannot keep exactly (inexact numbers, lone
// surrogates, duplicate names).
func FuzzCanonicalMatchesJCS(f *testing.F) {
	for _, s := range []string{
		`{"b":1,"a":[true,false,null],"c":{"z":"\u003c\u0026\u003e","y":"\u2028\ud83d\ude00"}}`,
		`[1e21,1e-7,0.000001,123456789012345678,-1.5,0,100,1E2,2.50]`,
		`{"\ud83d\ude00":1,"\uffff":2,"é":3,"e":4,"":5}`,
		`"\b\f\n\r\t\u0001\u001f\/\\\""`,
		`{ "a" : [ 1 , 2 ] , "b" : { } , "c" : [ ] }`,
		`{"a":1,"a":2}`,
		`"\ud800"`,
		`9007199254740993`,
		`-0`, `-0.0`, `1e400`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			if _, err := canonicalize(raw); err == nil {
				t.Fatalf("canonicalize accepted invalid JSON %q", raw)
			}
			return
		}
		got, err := canonicalize(raw)
		want, jerr := jcs.Transform(raw)
		switch {
		case err == nil && jerr != nil:
			t.Fatalf("canonicalize(%q) = %q; jcs refuses it: %v", raw, got, jerr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("canonicalize(%q)\n got %q\nwant %q (jcs)", raw, got, want)
		case err != nil && jerr == nil && !refusable(err):
			t.Fatalf("canonicalize(%q) = %v; jcs gives %q", raw, err, want)
		}
		// The canonical form is a fixed point.
		if err == nil {
			again, err := canonicalize(got)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("canonicalize is not idempotent on %q: %q, %v", got, again, err)
			}
		}
	})
}

// refusable reports whether err is one of the refusals RFC 8785 allows
// where jcs quietly picks a value.
func refusable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "no exact RFC 8785 form") || strings.Contains(msg, "lone UTF-16 surrogate") ||
		strings.Contains(msg, "duplicate member") || strings.Contains(msg, "nested too deeply")
}

// TestCanonicalizeMarshalOutput runs json.Marshal output of awkward Go
// values through both canonicalizers.
func TestCanonicalizeMarshalOutput(t *testing.T) {
	values := []any{
		map[string]any{"z": "<&>\u2028\u2029", "a": "\xff\xfe", "m": map[string]int{"b": 2, "a": 1}},
		map[string]float64{"tiny": 5e-324, "big": 1.7976931348623157e308, "half": 0.5, "third": 1.0 / 3, "e21": 1e21, "e20": 1e20},
		[]any{float32(0.1), float32(3.4e38), int64(1 << 53), -42, uint8(7), true, nil, ""},
		struct {
			B string `json:"b"`
			A []byte `json:"a"`
		}{"x", []byte{0, 1, 2, 255}},
		map[string]string{"\U0001F600": "smile", "\uFFFF": "max BMP", "\u00e9": "e-acute"},
	}
	for _, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := canonicalize(raw)
		if err != nil {
			t.Fatalf("canonicalize(%s): %v", raw, err)
		}
		want, err := jcs.Transform(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("canonicalize(%s)\n got %s\nwant %s", raw, got, want)
		}
	}
	for _, bad := range []float64{math.Copysign(0, -1)} {
		raw, _ := json.Marshal(bad)
		if _, err := canonicalize(raw); err == nil {
			t.Errorf("canonicalize(%s) accepted -0", raw)
		}
	}
	if _, err := canonicalize([]byte(`9007199254740993`)); err == nil {
		t.Error("canonicalize accepted 2^53+1, which float64 cannot hold")
	}
}

func BenchmarkNewPlan(b *testing.B) {
	type body struct {
		File   struct{ Root, Rel string } `json:"file"`
		Offset int                        `json:"offset"`
		Limit  int                        `json:"limit"`
	}
	var bd body
	bd.File.Root, bd.File.Rel, bd.Offset, bd.Limit = "main", "notes/small.txt", 1, 2000
	spec := PlanSpec{Tool: "read_file", Action: "read", ReadOnly: true, Display: "read notes/small.txt", Targets: []string{"notes/small.txt"}, Body: bd}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewPlan(spec); err != nil {
			b.Fatal(err)
		}
	}
}
