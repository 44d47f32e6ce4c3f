package task

import (
	"bytes"
	"testing"
)

// FuzzDecodeCanonical: whatever Decode accepts has a canonical form that
// decodes, and canonicalizes to the same bytes again: the form Check
// compares a stored body with byte for byte is stable.
func FuzzDecodeCanonical(f *testing.F) {
	c, err := sample().Canonical()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(c)
	if sc, err := splitSample().Canonical(); err == nil {
		f.Add(sc) // a split task's body, with its plan
	}
	f.Add(bytes.Replace(c, []byte(`"tools":["list_files","read_file"]`), []byte(`"tools":["read_file","list_files","read_file"]`), 1))
	f.Add(bytes.Replace(c, []byte(`"v":1`), []byte(`"v" : 1`), 1))
	f.Add(bytes.Replace(c, []byte(`"max_runtime":"5m0s"`), []byte(`"max_runtime":"300s"`), 1))
	f.Add(bytes.Replace(c, []byte(`07:00:00Z`), []byte(`09:00:00+02:00`), 1))
	f.Add(bytes.Replace(c, []byte(`digest`), []byte(`d\u0069gest \ud83d\ude00`), 1))
	f.Fuzz(func(t *testing.T, raw []byte) {
		b, err := Decode(raw)
		if err != nil {
			return
		}
		c1, err := b.Canonical()
		if err != nil {
			return // a number RFC 8785 cannot hold exactly: Check refuses it
		}
		b2, err := Decode(c1)
		if err != nil {
			t.Fatalf("Decode(Canonical(Decode(%q))) = %v; the canonical form must decode", raw, err)
		}
		c2, err := b2.Canonical()
		if err != nil || !bytes.Equal(c1, c2) {
			t.Fatalf("canonical form not stable:\n%s\n%s (%v)", c1, c2, err)
		}
	})
}
