package arbiter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/taint"
	"github.com/homard/homard/internal/tool"
)

// Per-value taint (permissions.taint = "value", Options.TaintByValue):
// every text a session's model is shown — a tool's result, recalled
// memory, the owner's message — is kept in the store with its label
// (store.TaintText), in the same transaction as the run it came from, and
// a ledger per session (internal/taint) is built from those rows. An
// outbound Plan asks only when its own arguments carry private text. The
// rows, not the ledger, are the truth: a ledger is read again from the
// rows another process added since, and rebuilt after a restart. A
// session marked private without any private row (it read its data
// before value mode, or its rows could not be kept) is judged by the
// session mark: it fails closed.

// maxLedgers bounds the ledgers kept in memory; past it they are dropped
// and read again from the store when next needed.
const maxLedgers = 256

// ledger is one session's ledger and how far it has read the store.
type ledger struct {
	mu      sync.Mutex
	l       taint.Ledger
	last    int64 // the last store.TaintText.ID added
	private bool  // a private text was added
}

// ledgers holds the sessions' ledgers.
type ledgers struct {
	mu sync.Mutex
	m  map[string]*ledger
}

func (ls *ledgers) get(session string) *ledger {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil || len(ls.m) >= maxLedgers {
		ls.m = make(map[string]*ledger)
	}
	e := ls.m[session]
	if e == nil {
		e = &ledger{}
		ls.m[session] = e
	}
	return e
}

// Observe records a text the caller's session's model is about to be
// shown that no tool returned: recalled memory (taint.Private, which also
// marks the session private, as MarkPrivate does) or the owner's message
// (taint.Owner). Without value taint only the private mark is kept.
func (a *Arbiter) Observe(ctx context.Context, c Caller, src taint.Source, text string) error {
	if src.Label == taint.Private {
		if err := a.MarkPrivate(ctx, c); err != nil {
			return err
		}
	}
	if !a.o.TaintByValue {
		return nil
	}
	err := a.o.Store.Write(ctx, func(tx *store.Tx) error {
		if err := tx.EnsureSession(c.Session, c.Owner, a.o.Now()); err != nil {
			return err
		}
		return tx.AddTaintText(c.Session, store.TaintText{Label: int(src.Label), What: src.What, Text: text, At: a.o.Now()})
	})
	if err != nil {
		return fmt.Errorf("arbiter: record what session %s was shown: %w", c.Session, err)
	}
	return nil
}

// keepText records, with value taint, what a tool that ran returned to
// the model: private unless the tool's results are public (c.taint).
func (a *Arbiter) keepText(tx *store.Tx, c *call) error {
	if !a.o.TaintByValue || !c.ran || c.out.Result == nil {
		return nil
	}
	label := taint.Public
	if c.taint {
		label = taint.Private
	}
	return tx.AddTaintText(c.p.Caller.Session, store.TaintText{Label: int(label), What: resultSource(c.plan), Text: c.out.Result.Text, At: a.o.Now()})
}

// resultSource names where a result came from, for a card: the tool and
// what it touched.
func resultSource(p tool.Plan) string {
	what := strings.Join(p.Targets(), ", ")
	if what == "" {
		what, _, _ = strings.Cut(p.Display(), "\n")
	}
	return "the result of " + p.Tool() + " (" + what[:tool.RuneCut(what, 120)] + ")"
}

// carries reports whether an outbound Plan of session carries the
// owner's private data, by value, and if so which: "" for the session
// rule (the ledger overflowed, or the session read private data that has
// no rows).
func (a *Arbiter) carries(ctx context.Context, session string, p tool.Plan) (bool, string, error) {
	private, err := a.sessionPrivate(ctx, session)
	if err != nil || !private {
		return false, "", err
	}
	e := a.ledgers.get(session)
	e.mu.Lock()
	defer e.mu.Unlock()
	rows, err := a.o.Store.TaintTexts(ctx, session, e.last)
	if err != nil {
		return false, "", fmt.Errorf("arbiter: read session %s's taint: %w", session, err)
	}
	for _, r := range rows {
		e.l.Add(taint.Source{Label: taint.Label(r.Label), What: r.What}, r.Text)
		e.private = e.private || taint.Label(r.Label) == taint.Private
		e.last = r.ID
	}
	if !e.private || e.l.Overflow() {
		return true, "", nil
	}
	m, found := e.l.Find(planStrings(p.Canonical())...)
	if !found {
		return false, "", nil
	}
	what := m.Source.What
	if m.Encoding != "" {
		what += ", " + m.Encoding + "-encoded"
	}
	return true, what, nil
}

// planStrings returns every string, key and number of a Plan's canonical
// JSON: what an outbound request carries.
func planStrings(canonical []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	var out []string
	for {
		t, err := dec.Token()
		if err == io.EOF || err != nil {
			// A Plan's canonical form is JSON homard wrote; if it ever
			// were not, the whole text is still checked.
			if err != io.EOF {
				out = append(out, string(canonical))
			}
			return out
		}
		switch v := t.(type) {
		case string:
			out = append(out, v)
		case json.Number:
			out = append(out, v.String())
		}
	}
}
