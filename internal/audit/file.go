package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
	"github.com/homard/homard/internal/tool"
)

// An export file holds consecutive records as JSON Lines, oldest first:
// every line is one record, the object `homard audit --json` prints
// (wire.AuditRecord; cmd/homard's testdata/audit/export.txtar holds the two
// byte-equal), with every field Sum covers in the form Sum hashes it — time
// as RFC 3339 with nanoseconds in UTC — and the record's prev_hash and hash.
// So the file alone, on any machine, can be checked with VerifyFile.

// MaxLineBytes bounds one line of an export file. A record's arguments are
// capped (16 KiB by default) but its effects list every path a command
// changed, so the bound is generous; it keeps what a hostile file can make
// the verifier hold in memory small.
const MaxLineBytes = 4 << 20

// ErrNoRecords is returned by VerifyFile for a file without a record.
var ErrNoRecords = errors.New("the file holds no audit records")

// line is one record of an export file. Its keys, their order and their
// encoding are wire.AuditRecord's; Time is the exact text Sum hashes.
type line struct {
	Seq        int64  `json:"seq"`
	Time       string `json:"time"`
	Owner      string `json:"owner"`
	Session    string `json:"session"`
	Trust      string `json:"trust"`
	Tool       string `json:"tool"`
	Decision   string `json:"decision"`
	Rule       string `json:"rule"`
	Reason     string `json:"reason"`
	Args       string `json:"args"`
	PlanHash   string `json:"plan_hash"`
	RunID      string `json:"run_id"`
	ApprovalID string `json:"approval_id"`
	Effects    string `json:"effects"`
	PrevHash   string `json:"prev_hash"`
	Hash       string `json:"hash"`
}

// sumTime is Time as Sum hashes it.
func sumTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// WriteRecord writes r to w as one line of an export file. JSON carries
// text, not bytes: a field that is not valid UTF-8 could not be read back
// as written, so such a record is refused (naming it and the field) rather
// than exported in a form that would not verify. Characters a terminal
// would hide are written as \u escapes, as `homard audit --json` does; the
// value read back is the same.
func WriteRecord(w io.Writer, r Record) error {
	l := line{
		Seq: r.Seq, Time: sumTime(r.Time), Owner: r.Owner, Session: r.Session, Trust: string(r.Trust), Tool: r.Tool,
		Decision: string(r.Decision), Rule: r.Rule, Reason: r.Reason, Args: r.Args, PlanHash: r.PlanHash,
		RunID: r.RunID, ApprovalID: r.ApprovalID, Effects: r.Effects, PrevHash: r.PrevHash, Hash: r.Hash,
	}
	for name, v := range map[string]string{
		"owner": l.Owner, "session": l.Session, "trust": l.Trust, "tool": l.Tool, "decision": l.Decision,
		"rule": l.Rule, "reason": l.Reason, "args": l.Args, "plan_hash": l.PlanHash, "run_id": l.RunID,
		"approval_id": l.ApprovalID, "effects": l.Effects, "prev_hash": l.PrevHash, "hash": l.Hash,
	} {
		if !utf8.ValidString(v) {
			return fmt.Errorf("export audit record %d: its %s is not valid UTF-8, which a JSON line cannot carry exactly", r.Seq, name)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("export audit record %d: %w", r.Seq, err)
	}
	out := termtext.EscapeJSON(b.Bytes())
	if len(out)-1 > MaxLineBytes {
		return fmt.Errorf("export audit record %d: its line would be %d bytes, over the %d a verifier reads", r.Seq, len(out)-1, MaxLineBytes)
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("export audit record %d: %w", r.Seq, err)
	}
	return nil
}

// lineLimits bound the strict decoding of one line: one flat object.
var lineLimits = tool.Limits{MaxBytes: MaxLineBytes, MaxString: MaxLineBytes, MaxItems: 32, MaxDepth: 1}

// readRecord decodes one line strictly: every key present, none unknown or
// repeated, no null, the time and hashes in the one form they are written.
func readRecord(raw []byte) (Record, error) {
	var l line
	if err := tool.DecodeStrict(raw, &l, lineLimits); err != nil {
		msg := strings.TrimPrefix(err.Error(), tool.ErrArguments.Error()+": ")
		return Record{}, errors.New(strings.ReplaceAll(msg, "the arguments object", "the record"))
	}
	if l.Seq < 1 {
		return Record{}, fmt.Errorf("seq %d: records count from 1", l.Seq)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil || sumTime(t) != l.Time {
		return Record{}, fmt.Errorf("time %s is not RFC 3339 with nanoseconds in UTC as an export writes it", quoted(l.Time))
	}
	for _, h := range []struct{ name, v string }{{"prev_hash", l.PrevHash}, {"hash", l.Hash}} {
		if !isHash(h.v) {
			return Record{}, fmt.Errorf("%s %s is not 64 lowercase hex digits", h.name, quoted(h.v))
		}
	}
	return Record{
		Seq: l.Seq, Time: t, Owner: l.Owner, Session: l.Session, Trust: policy.Trust(l.Trust), Tool: l.Tool,
		Decision: Decision(l.Decision), Rule: l.Rule, Reason: l.Reason, Args: l.Args, PlanHash: l.PlanHash,
		RunID: l.RunID, ApprovalID: l.ApprovalID, Effects: l.Effects, PrevHash: l.PrevHash, Hash: l.Hash,
	}, nil
}

// quoted is s for an error message: quoted, and cut when long.
func quoted(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:tool.RuneCut(s, 80)]) + "…"
	}
	return strconv.Quote(s)
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// String is a's form for `homard audit anchor`: "SEQ:HASH".
func (a Anchor) String() string { return strconv.FormatInt(a.Seq, 10) + ":" + a.Hash }

// ParseAnchor reads an anchor as `homard audit anchor` prints it,
// "SEQ:HASH", or a bare HASH (then Seq is 0 and VerifyFile looks for the
// hash).
func ParseAnchor(s string) (Anchor, error) {
	seq, hash, ok := strings.Cut(s, ":")
	if !ok {
		seq, hash = "", s
	}
	a := Anchor{Hash: hash}
	if ok {
		n, err := strconv.ParseInt(seq, 10, 64)
		if err != nil || n < 1 || seq[0] == '+' {
			return Anchor{}, fmt.Errorf("anchor %q: want SEQ:HASH as `homard audit anchor` prints it, SEQ a record number from 1", s)
		}
		a.Seq = n
	}
	if !isHash(hash) {
		return Anchor{}, fmt.Errorf("anchor %q: the hash must be 64 lowercase hex digits", s)
	}
	return a, nil
}

// FileError names where an export file stops verifying: its line (0 when
// the problem is the file as a whole) and record (0 when unknown), and why.
type FileError struct {
	Line   int
	Seq    int64
	Reason string
}

func (e *FileError) Error() string {
	switch {
	case e.Line > 0 && e.Seq > 0:
		return fmt.Sprintf("line %d (record %d): %s", e.Line, e.Seq, e.Reason)
	case e.Line > 0:
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return e.Reason
}

// Is makes errors.Is(err, ErrBroken) true: the file is not the chain it
// claims to be.
func (e *FileError) Is(target error) bool { return target == ErrBroken }

// FileReport is what an export holds: how many records, the first and the
// last, and the hash the first links to.
type FileReport struct {
	Records int
	First   Anchor
	Head    Anchor
	// Start is the first record's PrevHash: GenesisHash when the file
	// starts at record 1; otherwise the hash of a record the file does not
	// hold, taken as given.
	Start string
	// Anchored: VerifyFile found the anchor it was given in the chain.
	Anchored bool
}

// FromGenesis reports whether the file starts at the first record ever
// written.
func (r FileReport) FromGenesis() bool { return r.First.Seq == 1 }

// Export writes to w, oldest first, the records from the first one whose
// time is at or after since (every record when since is zero) to the
// last, from one consistent snapshot. The records are written as they are
// stored, broken or not: an export is also how a damaged log is kept for
// investigation. It returns what it wrote (no records: Records is 0).
func Export(ctx context.Context, st *store.Store, w io.Writer, since time.Time) (FileReport, error) {
	var rep FileReport
	bw := bufio.NewWriter(w)
	err := st.AllAudit(ctx, func(row store.AuditRow) error {
		r := fromRow(row)
		if rep.Records == 0 && r.Time.Before(since) {
			return nil
		}
		if err := WriteRecord(bw, r); err != nil {
			return err
		}
		if rep.Records == 0 {
			rep.First, rep.Start = Anchor{Seq: r.Seq, Hash: r.Hash}, r.PrevHash
		}
		rep.Records++
		rep.Head = Anchor{Seq: r.Seq, Hash: r.Hash}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	return rep, err
}

// VerifyFile checks an export read from r, on its own: every line must
// decode strictly to a record whose hash matches its content; seqs must
// follow each other without a gap and each record must link to the one
// before it. A file starting at record 1 must start from the genesis hash;
// one starting later (an export --since) links to a record it does not
// hold, whose hash is taken as given (FileReport.Start).
//
// A file cut short, missing its first records, or rewritten from some
// record on with every later hash recomputed (Sum has no key) is still a
// valid chain: only an anchor — a record's Seq and Hash kept elsewhere when it was
// written (`homard audit anchor`) — shows it. With a non-zero a, the file
// must hold the record at a.Seq with hash a.Hash (with a bare hash, some
// record with it), or start right after it, linking to a.Hash. Then
// nothing up to the anchor was changed or cut since it was taken.
//
// It returns the report and, at the first problem, a *FileError naming the
// line and record, or ErrNoRecords.
func VerifyFile(r io.Reader, a Anchor) (FileReport, error) {
	var rep FileReport
	var l link
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+2) // + the line's "\r\n"
	n := 0
	for sc.Scan() {
		n++
		raw := sc.Bytes()
		if len(raw) > MaxLineBytes {
			return rep, &FileError{Line: n, Reason: fmt.Sprintf("the line is over %d bytes", MaxLineBytes)}
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			return rep, &FileError{Line: n, Reason: "the line is empty; every line must be a record"}
		}
		rec, err := readRecord(raw)
		if err != nil {
			return rep, &FileError{Line: n, Reason: err.Error()}
		}
		if rep.Records == 0 {
			l = link{want: rec.Seq, prev: rec.PrevHash}
			if rec.Seq == 1 {
				l.prev = GenesisHash
			}
			rep.First, rep.Start = Anchor{Seq: rec.Seq, Hash: rec.Hash}, rec.PrevHash
		}
		if why := l.next(rec); why != "" {
			return rep, &FileError{Line: n, Seq: rec.Seq, Reason: why}
		}
		rep.Records++
		rep.Head = Anchor{Seq: rec.Seq, Hash: rec.Hash}
		switch {
		case a.Seq > 0 && rec.Seq == a.Seq && rec.Hash != a.Hash:
			return rep, &FileError{Line: n, Seq: rec.Seq, Reason: fmt.Sprintf(
				"its hash is %s but the anchor says %s: records up to it were changed after the anchor was taken", rec.Hash, a.Hash)}
		case a.Hash != "" && rec.Hash == a.Hash && (a.Seq == 0 || a.Seq == rec.Seq):
			rep.Anchored = true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return rep, &FileError{Line: n + 1, Reason: fmt.Sprintf("the line is over %d bytes", MaxLineBytes)}
		}
		return rep, fmt.Errorf("read audit export: %w", err)
	}
	if rep.Records == 0 {
		return rep, ErrNoRecords
	}
	if a.Hash == "" || rep.Anchored {
		return rep, nil
	}
	err := missedAnchor(rep, a)
	rep.Anchored = err == nil
	return rep, err
}

// missedAnchor says why a verified file that does not hold anchor a does
// not reach it, or returns nil when the file starts right after a, linking
// to it.
func missedAnchor(rep FileReport, a Anchor) error {
	switch {
	case rep.Start == a.Hash && (a.Seq == 0 || a.Seq == rep.First.Seq-1):
		return nil
	case a.Seq == 0:
		return &FileError{Reason: "no record in the file has the anchor's hash: records up to it were changed or cut, or the file starts after it"}
	case a.Seq > rep.Head.Seq:
		return &FileError{Reason: fmt.Sprintf("the chain ends at seq %d but the anchor is at seq %d: records were cut", rep.Head.Seq, a.Seq)}
	case a.Seq == rep.First.Seq-1:
		return &FileError{Line: 1, Seq: rep.First.Seq, Reason: fmt.Sprintf(
			"its previous hash is %s but the anchor says record %d is %s: records up to it were changed after the anchor was taken", rep.Start, a.Seq, a.Hash)}
	}
	return &FileError{Reason: fmt.Sprintf(
		"the file starts at seq %d, after the anchor at seq %d, so it cannot show that record; export with an earlier --since", rep.First.Seq, a.Seq)}
}
