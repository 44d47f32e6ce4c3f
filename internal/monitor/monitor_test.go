package monitor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
)

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

// at is t0 plus s seconds.
func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func denied(s int) Call {
	return Call{At: at(s), Tool: "read_file", Rule: policy.RuleLimitWorkspace, Denied: true}
}

func privateRead(s int) Call {
	return Call{At: at(s), Tool: "read_file", Action: policy.ActionRead, Label: "read notes/private.md (lines 1-2000)",
		Ran: true, Private: true, Targets: []string{"notes/private.md"}}
}

func fetch(s int, url string) Call {
	return Call{At: at(s), Tool: "http_get", Action: policy.ActionFetch, Label: "GET " + url, Ran: true, Targets: []string{"https://a.example"}}
}

func write(s int, target string) Call {
	return Call{At: at(s), Tool: "write_file", Action: policy.ActionWrite, Label: "write " + target, Ran: true, Targets: []string{target}}
}

var defaults = Limits{Window: DefaultWindow, DeniedRepeat: DefaultDeniedRepeat, FetchBurst: DefaultFetchBurst, WriteSpread: DefaultWriteSpread}

// check is Check, failing the test when the answer is not want (the rule
// id, "" for no trip).
func check(t *testing.T, tr *Trajectory, p Proposal, want string) Trip {
	t.Helper()
	got, ok := tr.Check(p)
	if !ok {
		got.Rule = ""
	}
	if got.Rule != want {
		t.Fatalf("Check(%s at +%s) = %q (%s); want %q", p.Action, p.At.Sub(t0), got.Rule, got.Evidence, want)
	}
	return got
}

func TestDeniedRepeat(t *testing.T) {
	tr := New(defaults)
	read := Proposal{At: at(10), Action: policy.ActionRead}
	for i := range DefaultDeniedRepeat {
		check(t, tr, read, "") // not one call before the threshold
		tr.Record(denied(i))
	}
	trip := check(t, tr, read, policy.RuleMonitorDeniedRepeat)
	for _, want := range []string{"3 calls were denied in 10s", "read_file (limit.workspace)"} {
		if !strings.Contains(trip.Evidence, want) {
			t.Errorf("evidence %q does not hold %q", trip.Evidence, want)
		}
	}
	// Any kind of call asks, a write as well as a read.
	check(t, tr, Proposal{At: at(11), Action: policy.ActionWrite}, policy.RuleMonitorDeniedRepeat)
}

func TestDeniedCallsThatRanOrWerePendingDoNotCount(t *testing.T) {
	tr := New(defaults)
	for i := range 10 {
		tr.Record(Call{At: at(i), Tool: "http_get", Action: policy.ActionFetch, Rule: policy.RuleModeSmart}) // pending
		tr.Record(Call{At: at(i), Tool: "read_file", Action: policy.ActionRead, Ran: true})
	}
	check(t, tr, Proposal{At: at(20), Action: policy.ActionRead}, "")
}

func TestFetchBurst(t *testing.T) {
	tr := New(defaults)
	tr.Record(privateRead(0))
	tr.Record(fetch(30, "https://a.example/1"))
	check(t, tr, Proposal{At: at(40), Action: policy.ActionFetch}, "")
	tr.Record(fetch(60, "https://a.example/2"))
	trip := check(t, tr, Proposal{At: at(150), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
	for _, want := range []string{"outbound call 3 in 2m00s", "read_file (read notes/private.md", "GET https://a.example/1, GET https://a.example/2"} {
		if !strings.Contains(trip.Evidence, want) {
			t.Errorf("evidence %q does not hold %q", trip.Evidence, want)
		}
	}
	// A send counts and asks as a fetch does; a read or a write does not.
	check(t, tr, Proposal{At: at(150), Action: policy.ActionSend}, policy.RuleMonitorFetchBurst)
	check(t, tr, Proposal{At: at(150), Action: policy.ActionRead}, "")
	check(t, tr, Proposal{At: at(150), Action: policy.ActionWrite}, "")
}

// TestFetchBurstTwin: the same fetches with nothing private read never
// trip, however many.
func TestFetchBurstTwin(t *testing.T) {
	tr := New(defaults)
	tr.Record(Call{At: at(0), Tool: "current_time", Action: policy.ActionRead, Ran: true})
	for i := range 20 {
		check(t, tr, Proposal{At: at(i + 1), Action: policy.ActionFetch}, "")
		tr.Record(fetch(i+1, fmt.Sprintf("https://a.example/%d", i)))
	}
}

// TestFetchBurstCountsAfterThePrivateRead: fetches before the private read
// do not count, and neither do outbound calls that did not run.
func TestFetchBurstCountsAfterThePrivateRead(t *testing.T) {
	tr := New(defaults)
	for i := range 5 {
		tr.Record(fetch(i, "https://a.example/before"))
	}
	tr.Record(privateRead(10))
	tr.Record(Call{At: at(11), Tool: "http_get", Action: policy.ActionFetch, Rule: policy.RuleTaintPrivateEgress}) // pending
	tr.Record(fetch(12, "https://a.example/after"))
	check(t, tr, Proposal{At: at(13), Action: policy.ActionFetch}, "")
}

func TestMarkPrivateStartsTheBurst(t *testing.T) {
	tr := New(defaults)
	tr.MarkPrivate("recalled memory")
	tr.Record(fetch(1, "https://a.example/1"))
	tr.Record(fetch(2, "https://a.example/2"))
	trip := check(t, tr, Proposal{At: at(3), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
	if !strings.Contains(trip.Evidence, "(recalled memory)") {
		t.Errorf("evidence %q does not name the recalled memory", trip.Evidence)
	}
}

func TestWriteSpread(t *testing.T) {
	tr := New(defaults)
	folders := []string{"a/x.md", "b/x.md", "c/d/x.md", "top.md", "docs:y/z.md"}
	w := Proposal{At: at(100), Action: policy.ActionWrite}
	for i, f := range folders {
		check(t, tr, w, "")
		tr.Record(write(i, f))
		// Writes into folders already seen add nothing.
		tr.Record(write(i, "a/again.md"))
	}
	trip := check(t, tr, w, policy.RuleMonitorWriteSpread)
	if want := "writes into 5 folders in 1m40s (1 more, then b, c/d, ., docs:y)"; trip.Evidence != want {
		t.Errorf("evidence = %q; want %q", trip.Evidence, want)
	}
	check(t, tr, Proposal{At: at(100), Action: policy.ActionRead}, "")
}

func TestWindowDropsOldCalls(t *testing.T) {
	l := defaults
	l.Window = time.Minute
	tr := New(l)
	tr.Record(denied(0))
	tr.Record(denied(30))
	tr.Record(denied(59))
	check(t, tr, Proposal{At: at(60), Action: policy.ActionRead}, policy.RuleMonitorDeniedRepeat)
	check(t, tr, Proposal{At: at(61), Action: policy.ActionRead}, "") // the first is out of the window

	// The private read stays, the fetches age out.
	tr.Record(privateRead(100))
	tr.Record(fetch(101, "https://a.example/1"))
	tr.Record(fetch(102, "https://a.example/2"))
	check(t, tr, Proposal{At: at(103), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
	check(t, tr, Proposal{At: at(200), Action: policy.ActionFetch}, "")
	tr.Record(fetch(201, "https://a.example/3"))
	tr.Record(fetch(202, "https://a.example/4"))
	check(t, tr, Proposal{At: at(203), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
}

func TestApprovalResetsTheRule(t *testing.T) {
	tr := New(defaults)
	tr.Record(privateRead(0))
	tr.Record(fetch(1, "https://a.example/1"))
	tr.Record(fetch(2, "https://a.example/2"))
	check(t, tr, Proposal{At: at(3), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
	// The owner approved the third; it runs and is recorded, then the
	// rule counts again from zero: two more fetches run unasked.
	tr.Record(fetch(3, "https://a.example/3"))
	tr.Approved(policy.RuleMonitorFetchBurst)
	check(t, tr, Proposal{At: at(4), Action: policy.ActionFetch}, "")
	tr.Record(fetch(4, "https://a.example/4"))
	check(t, tr, Proposal{At: at(5), Action: policy.ActionFetch}, "")
	tr.Record(fetch(5, "https://a.example/5"))
	check(t, tr, Proposal{At: at(6), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)

	// Approving one rule leaves the others counting.
	for i := range 3 {
		tr.Record(denied(10 + i))
	}
	tr.Approved(policy.RuleMonitorFetchBurst)
	check(t, tr, Proposal{At: at(20), Action: policy.ActionRead}, policy.RuleMonitorDeniedRepeat)
	tr.Approved(policy.RuleMonitorDeniedRepeat)
	check(t, tr, Proposal{At: at(20), Action: policy.ActionRead}, "")
}

func TestZeroTurnsRulesOff(t *testing.T) {
	for _, c := range []struct {
		name   string
		limits Limits
		off    string
	}{
		{"denied_repeat", Limits{FetchBurst: 3, WriteSpread: 5}, policy.RuleMonitorDeniedRepeat},
		{"fetch_burst", Limits{DeniedRepeat: 3, WriteSpread: 5}, policy.RuleMonitorFetchBurst},
		{"write_spread", Limits{DeniedRepeat: 3, FetchBurst: 3}, policy.RuleMonitorWriteSpread},
		{"all", Limits{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := New(c.limits)
			tr.Record(privateRead(0))
			for i := range 10 {
				tr.Record(denied(i))
				tr.Record(fetch(i, "https://a.example/"))
				tr.Record(write(i, fmt.Sprintf("f%d/x.md", i)))
			}
			for _, a := range []policy.Action{policy.ActionRead, policy.ActionFetch, policy.ActionWrite} {
				got, ok := tr.Check(Proposal{At: at(20), Action: a})
				if ok && (got.Rule == c.off || c.off == "") {
					t.Errorf("Check(%s) tripped %s with it turned off", a, got.Rule)
				}
			}
		})
	}
	if !(Limits{Window: time.Hour}).Off() || defaults.Off() {
		t.Error("Limits.Off is wrong")
	}
}

func TestFetchBurstOfOne(t *testing.T) {
	tr := New(Limits{FetchBurst: 1})
	check(t, tr, Proposal{At: at(1), Action: policy.ActionFetch}, "")
	tr.Record(privateRead(1))
	check(t, tr, Proposal{At: at(2), Action: policy.ActionFetch}, policy.RuleMonitorFetchBurst)
}

func TestMaxCallsBoundsMemory(t *testing.T) {
	tr := New(defaults)
	for range 3 * MaxCalls {
		tr.Record(Call{At: at(0), Tool: "read_file", Action: policy.ActionRead, Ran: true, Label: strings.Repeat("x", 500)})
	}
	if len(tr.calls) != MaxCalls {
		t.Errorf("kept %d calls; want %d", len(tr.calls), MaxCalls)
	}
	if n := len([]rune(tr.calls[0].Label)); n != maxLabel {
		t.Errorf("a label kept %d runes; want %d", n, maxLabel)
	}
}

func TestFolder(t *testing.T) {
	for in, want := range map[string]string{
		"notes/a.md": "notes", "a.md": ".", "docs:x/y.md": "docs:x", "docs:y.md": "docs:", "a/b/c": "a/b",
	} {
		if got := Folder(in); got != want {
			t.Errorf("Folder(%q) = %q; want %q", in, got, want)
		}
	}
}
