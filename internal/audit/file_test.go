package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
)

// exportN appends n sample records (the second with effects and text a
// terminal would hide, to check they are carried exactly) and returns them
// with the export's lines, each without its "\n".
func exportN(t *testing.T, n int) ([]Record, []string) {
	t.Helper()
	st, _ := openTest(t)
	var recs []Record
	for i := 1; i <= n; i++ {
		r := sample(i)
		if i == 2 {
			r.Reason = "quoted <b>&amp;</b> \u202eevil\u202c\tand\nnewline, é, \u2028"
			r.Effects = "applied as checkpoint cp1:\nM notes/a.md\nA notes/\x7fb.md"
		}
		err := st.Write(t.Context(), func(tx *store.Tx) error {
			var err error
			r, err = Append(tx, r)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	var b bytes.Buffer
	rep, err := Export(t.Context(), st, &b, time.Time{})
	if err != nil || rep.Records != n || rep.Head.Hash != recs[n-1].Hash || rep.Start != GenesisHash {
		t.Fatalf("Export = %+v, %v; want %d records from the genesis to %s", rep, err, n, recs[n-1].Hash)
	}
	return recs, strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

func file(lines ...string) *strings.Reader {
	return strings.NewReader(strings.Join(lines, "\n") + "\n")
}

// wantFileError checks err is a *FileError at line and seq whose reason
// says want.
func wantFileError(t *testing.T, name string, err error, line int, seq int64, want string) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, ErrBroken) || fe.Line != line || fe.Seq != seq || !strings.Contains(fe.Reason, want) {
		t.Errorf("%s: VerifyFile = %v; want a *FileError at line %d, record %d, saying %q", name, err, line, seq, want)
	}
}

func TestExportVerifyRoundTrip(t *testing.T) {
	recs, lines := exportN(t, 5)
	if len(lines) != 5 {
		t.Fatalf("export has %d lines; want 5", len(lines))
	}
	if strings.Contains(lines[1], "\u202e") || !strings.Contains(lines[1], `\u202e`) || !strings.Contains(lines[1], "<b>&amp;</b>") {
		t.Errorf("line 2 = %s; want the bidi control escaped and the HTML as it is", lines[1])
	}
	rep, err := VerifyFile(file(lines...), Anchor{})
	want := FileReport{Records: 5, First: Anchor{Seq: 1, Hash: recs[0].Hash}, Head: Anchor{Seq: 5, Hash: recs[4].Hash}, Start: GenesisHash}
	if err != nil || rep != want || !rep.FromGenesis() {
		t.Fatalf("VerifyFile = %+v, %v; want %+v", rep, err, want)
	}
	// The anchor at the head, as SEQ:HASH or a bare hash, is reached.
	for _, a := range []Anchor{rep.Head, {Hash: rep.Head.Hash}, {Seq: 3, Hash: recs[2].Hash}} {
		if rep, err := VerifyFile(file(lines...), a); err != nil || !rep.Anchored {
			t.Errorf("VerifyFile with anchor %v = %+v, %v; want it anchored", a, rep, err)
		}
	}
	// Without a trailing newline the last line still counts.
	if rep, err := VerifyFile(strings.NewReader(strings.Join(lines, "\n")), Anchor{}); err != nil || rep.Records != 5 {
		t.Errorf("VerifyFile without the final newline = %+v, %v", rep, err)
	}
}

// edit decodes line, sets key to v and encodes it again.
func edit(t *testing.T, line, key string, v any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m[key]; !ok {
		t.Fatalf("line has no key %q: %s", key, line)
	}
	m[key] = v
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestVerifyFileDetectsEditOfEveryField(t *testing.T) {
	recs, lines := exportN(t, 5)
	later := recs[2].Time.Add(time.Nanosecond).UTC().Format(time.RFC3339Nano)
	for key, v := range map[string]any{
		"time": later, "owner": "mallory", "session": "s2", "trust": "guest", "tool": "read_file",
		"decision": "denied", "rule": "mode.safe", "reason": recs[2].Reason + ".", "args": `{"path":"b.md"}`,
		"plan_hash": "", "run_id": "run9", "approval_id": "", "effects": "M x",
		"hash": strings.Repeat("0", 63) + "1",
	} {
		changed := append([]string(nil), lines...)
		changed[2] = edit(t, lines[2], key, v)
		_, err := VerifyFile(file(changed...), Anchor{})
		wantFileError(t, "changed "+key, err, 3, 3, "its content does not match its hash")
	}
	changed := append([]string(nil), lines...)
	changed[2] = edit(t, lines[2], "prev_hash", strings.Repeat("f", 64))
	_, err := VerifyFile(file(changed...), Anchor{})
	wantFileError(t, "changed prev_hash", err, 3, 3, "its previous hash does not match record 2")

	// A changed record whose hash is recomputed breaks the next link.
	r := recs[2]
	r.Reason = "nothing happened"
	r.Hash = Sum(r)
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err != nil {
		t.Fatal(err)
	}
	changed = append([]string(nil), lines...)
	changed[2] = strings.TrimSuffix(b.String(), "\n")
	_, err = VerifyFile(file(changed...), Anchor{})
	wantFileError(t, "changed and rehashed", err, 4, 4, "its previous hash does not match record 3")
}

// SHA-256 has no key: whoever edits a record and recomputes every hash
// after it makes a file that verifies alone. Only an anchor kept elsewhere
// shows it — this test keeps the docs honest about that.
func TestVerifyFileRehashedNeedsAnchor(t *testing.T) {
	recs, lines := exportN(t, 5)
	forged := append([]string(nil), lines[:2]...)
	prev := recs[1].Hash
	for _, r := range recs[2:] {
		if r.Seq == 3 {
			r.Reason = "nothing happened"
		}
		r.PrevHash = prev
		r.Hash = Sum(r)
		prev = r.Hash
		var b bytes.Buffer
		if err := WriteRecord(&b, r); err != nil {
			t.Fatal(err)
		}
		forged = append(forged, strings.TrimSuffix(b.String(), "\n"))
	}
	if _, err := VerifyFile(file(forged...), Anchor{}); err != nil {
		t.Fatalf("VerifyFile(rehashed from record 3) = %v; want it to verify alone (no key)", err)
	}
	_, err := VerifyFile(file(forged...), Anchor{Seq: 5, Hash: recs[4].Hash})
	wantFileError(t, "rehashed, anchor at the head", err, 5, 5, "but the anchor says")
	// Records up to an anchor before the edit stay proven; the edit after it does not show.
	if rep, err := VerifyFile(file(forged...), Anchor{Seq: 2, Hash: recs[1].Hash}); err != nil || !rep.Anchored {
		t.Errorf("VerifyFile(rehashed from record 3, anchor 2) = %+v, %v; want anchored", rep, err)
	}
}

func TestVerifyFileDetectsMissingAndMovedRecords(t *testing.T) {
	recs, lines := exportN(t, 5)
	for _, tc := range []struct {
		name  string
		lines []string
		line  int
		seq   int64
		want  string
	}{
		{"line removed", []string{lines[0], lines[1], lines[3], lines[4]}, 3, 4, "expected record 3 here"},
		{"lines swapped", []string{lines[0], lines[2], lines[1], lines[3], lines[4]}, 2, 3, "expected record 2 here"},
		{"line repeated", []string{lines[0], lines[1], lines[1], lines[2]}, 3, 2, "expected record 3 here"},
		{"renumbered", []string{lines[0], edit(t, lines[2], "seq", 2)}, 2, 2, "its previous hash does not match record 1"},
		{"first not from genesis", []string{edit(t, lines[0], "prev_hash", recs[4].Hash)}, 1, 1, "genesis"},
	} {
		_, err := VerifyFile(file(tc.lines...), Anchor{})
		wantFileError(t, tc.name, err, tc.line, tc.seq, tc.want)
	}
}

func TestVerifyFileCutTailNeedsAnchor(t *testing.T) {
	recs, lines := exportN(t, 5)
	head := Anchor{Seq: 5, Hash: recs[4].Hash}
	cut := lines[:4]
	// Alone, a cut file is a valid shorter chain ...
	if rep, err := VerifyFile(file(cut...), Anchor{}); err != nil || rep.Head.Seq != 4 {
		t.Fatalf("VerifyFile(cut) = %+v, %v; want records 1-4 intact", rep, err)
	}
	// ... which the anchor taken at the old head refuses.
	_, err := VerifyFile(file(cut...), head)
	wantFileError(t, "cut with anchor", err, 0, 0, "the chain ends at seq 4 but the anchor is at seq 5: records were cut")
	_, err = VerifyFile(file(cut...), Anchor{Hash: head.Hash})
	wantFileError(t, "cut with bare anchor", err, 0, 0, "no record in the file has the anchor's hash")
	// An anchor whose record now has another hash: changed before it.
	_, err = VerifyFile(file(lines...), Anchor{Seq: 4, Hash: recs[4].Hash})
	wantFileError(t, "anchor hash differs", err, 4, 4, "but the anchor says")
	// Missing the first record is, alone, an export that starts later.
	rep, err := VerifyFile(file(lines[1:]...), Anchor{})
	if err != nil || rep.FromGenesis() || rep.First.Seq != 2 || rep.Start != recs[0].Hash {
		t.Errorf("VerifyFile(without line 1) = %+v, %v; want it to start at seq 2 after %s", rep, err, recs[0].Hash)
	}
}

func TestVerifyFileRefusesMalformedLines(t *testing.T) {
	_, lines := exportN(t, 3)
	noNanos := edit(t, lines[1], "time", "2026-03-01T12:00:02+00:00")
	for _, tc := range []struct {
		name, line, want string
	}{
		{"unknown field", strings.TrimSuffix(lines[1], "}") + `,"note":"fine"}`, "note"},
		{"duplicate key", strings.TrimSuffix(lines[1], "}") + `,"reason":"other"}`, "reason"},
		{"missing key", strings.Replace(lines[1], `"owner":"alice",`, "", 1), "owner"},
		{"null", strings.Replace(lines[1], `"owner":"alice"`, `"owner":null`, 1), "owner"},
		{"not JSON", `{"seq":2,`, ""},
		{"two objects", lines[1] + lines[1], ""},
		{"empty line", "", "empty"},
		{"time not as written", noNanos, "not RFC 3339 with nanoseconds in UTC"},
		{"hash not hex", edit(t, lines[1], "hash", strings.ToUpper(strings.Repeat("ab", 32))), "64 lowercase hex"},
		{"seq zero", edit(t, lines[1], "seq", 0), "count from 1"},
		{"over the limit", `{"seq":2,"reason":"` + strings.Repeat("a", MaxLineBytes) + `"}`, "over"},
	} {
		_, err := VerifyFile(file(lines[0], tc.line, lines[2]), Anchor{})
		wantFileError(t, tc.name, err, 2, 0, tc.want)
	}
	if _, err := VerifyFile(strings.NewReader(""), Anchor{}); !errors.Is(err, ErrNoRecords) {
		t.Errorf("VerifyFile(empty) = %v; want ErrNoRecords", err)
	}
}

func TestExportSince(t *testing.T) {
	st, _ := openTest(t)
	recs := appendN(t, st, 5)
	var b bytes.Buffer
	rep, err := Export(t.Context(), st, &b, recs[2].Time)
	if err != nil || rep.Records != 3 || rep.First.Seq != 3 || rep.Start != recs[1].Hash {
		t.Fatalf("Export(since record 3) = %+v, %v; want records 3-5 after %s", rep, err, recs[1].Hash)
	}
	out := b.String()
	got, err := VerifyFile(strings.NewReader(out), Anchor{})
	if err != nil || got != rep || got.FromGenesis() {
		t.Fatalf("VerifyFile(since) = %+v, %v; want %+v, not from the genesis", got, err, rep)
	}
	// An anchor just before the file is linked to; one earlier cannot be.
	if got, err := VerifyFile(strings.NewReader(out), Anchor{Seq: 2, Hash: recs[1].Hash}); err != nil || !got.Anchored {
		t.Errorf("VerifyFile(since, anchor 2) = %+v, %v; want it anchored", got, err)
	}
	_, err = VerifyFile(strings.NewReader(out), Anchor{Seq: 2, Hash: recs[0].Hash})
	wantFileError(t, "since, wrong anchor 2", err, 1, 3, "but the anchor says record 2 is")
	_, err = VerifyFile(strings.NewReader(out), Anchor{Seq: 1, Hash: recs[0].Hash})
	wantFileError(t, "since, anchor 1", err, 0, 0, "the file starts at seq 3, after the anchor at seq 1")

	if rep, err := Export(t.Context(), st, &b, recs[4].Time.Add(time.Second)); err != nil || rep.Records != 0 {
		t.Errorf("Export(after the last) = %+v, %v; want no records", rep, err)
	}
}

func TestWriteRecordRefusesWhatJSONCannotCarry(t *testing.T) {
	r := sample(1)
	r.Seq, r.PrevHash = 1, GenesisHash
	r.Effects = "A notes/\xffb.md"
	r.Hash = Sum(r)
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err == nil || !strings.Contains(err.Error(), "record 1: its effects is not valid UTF-8") || b.Len() != 0 {
		t.Errorf("WriteRecord(invalid UTF-8) = %v, wrote %q; want it refused", err, b.String())
	}
}

func TestParseAnchor(t *testing.T) {
	h := strings.Repeat("0a", 32)
	for _, tc := range []struct {
		in   string
		want Anchor
		ok   bool
	}{
		{"12:" + h, Anchor{Seq: 12, Hash: h}, true},
		{h, Anchor{Hash: h}, true},
		{"0:" + h, Anchor{}, false},
		{"+1:" + h, Anchor{}, false},
		{"x:" + h, Anchor{}, false},
		{"3:" + strings.ToUpper(h), Anchor{}, false},
		{"3:" + h[:63], Anchor{}, false},
		{"", Anchor{}, false},
	} {
		got, err := ParseAnchor(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseAnchor(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if tc.ok && tc.want.Seq > 0 && tc.want.String() != tc.in {
			t.Errorf("%v.String() = %q; want %q", tc.want, tc.want.String(), tc.in)
		}
	}
}

// FuzzVerifyFile: no input makes the verifier panic, and what it accepts
// exports again to the same records.
func FuzzVerifyFile(f *testing.F) {
	r := sample(1)
	r.Seq, r.PrevHash = 1, GenesisHash
	r.Hash = Sum(r)
	var b bytes.Buffer
	if err := WriteRecord(&b, r); err != nil {
		f.Fatal(err)
	}
	f.Add(b.String())
	f.Add(b.String() + b.String())
	f.Add(`{"seq":1}` + "\n")
	f.Add("\n\n")
	f.Fuzz(func(t *testing.T, in string) {
		rep, err := VerifyFile(strings.NewReader(in), Anchor{})
		if err == nil && (rep.Records == 0 || rep.Head.Seq-rep.First.Seq+1 != int64(rep.Records)) {
			t.Fatalf("VerifyFile(%q) = %+v with no error", in, rep)
		}
	})
}
