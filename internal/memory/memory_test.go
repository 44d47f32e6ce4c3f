package memory

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/store/storetest"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// fakeSecret stands in for the app's redactor: it knows one pattern.
func fakeSecret(s string) (string, bool) {
	if strings.Contains(s, "AKIA") {
		return "aws-access-key-id", true
	}
	return "", false
}

func newMemory(tb testing.TB) (*Memory, *store.Store, *clock) {
	tb.Helper()
	dir := tb.TempDir()
	st := storetest.Open(tb)
	c := &clock{t: time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)}
	return New(Options{Dir: filepath.Join(dir, "memory"), Store: st, Secret: fakeSecret, Now: c.now}), st, c
}

func ids(us []Unit) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.ID)
	}
	return out
}

func texts(us []Unit) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.Text)
	}
	return out
}

func remember(tb testing.TB, m *Memory, owner, text string) Unit {
	tb.Helper()
	u, err := m.Remember(context.Background(), owner, Note{Text: text})
	if err != nil {
		tb.Fatalf("Remember(%q): %v", text, err)
	}
	return u
}

func recall(tb testing.TB, m *Memory, owner, q string) []string {
	tb.Helper()
	us, err := m.Recall(context.Background(), owner, q, 10)
	if err != nil {
		tb.Fatalf("Recall(%q): %v", q, err)
	}
	return texts(us)
}

func TestRecallLanguages(t *testing.T) {
	m, _, _ := newMemory(t)
	for _, s := range []string{
		"我喜欢喝乌龙茶，不加糖。",
		"明天下午三点开会，在三楼会议室。",
		"会議は金曜日の午後です。",
		"저는 녹차를 좋아합니다.",
		"I prefer oolong tea without sugar.",
		"The dentist appointment is on Friday.",
		"周末和 Alice 去爬山 hiking",
	} {
		remember(t, m, "owner", s)
	}
	cases := []struct {
		q    string
		want string // a substring of the first hit; "" means no hit
	}{
		{"乌龙", "乌龙茶"},
		{"开会", "开会"},
		{"乌龙茶", "乌龙茶"},
		{"会議", "会議"},
		{"녹차", "녹차"},
		{"oolong", "oolong"},
		{"OOLONG Tea", "oolong"},
		{"dentist friday", "dentist"},
		{"alice 爬山", "Alice"},
		{"hiking 周末", "Alice"},
		{"茶", "茶"},  // one CJK character: substring scan
		{"楼", "三楼"}, // inside a run, not a bigram start
		{"咖啡", ""},
		{"coffee", ""},
		{"", ""},
		{`"oolong" OR NEAR(`, "oolong"}, // FTS5 syntax is only text
	}
	for _, c := range cases {
		got := recall(t, m, "owner", c.q)
		if c.want == "" {
			if len(got) != 0 {
				t.Errorf("Recall(%q) = %q; want nothing", c.q, got)
			}
			continue
		}
		if len(got) == 0 || !strings.Contains(got[0], c.want) {
			t.Errorf("Recall(%q) = %q; want first hit containing %q", c.q, got, c.want)
		}
	}
	// Any-term fallback: "tea" and "dentist" are never in one unit.
	if got := recall(t, m, "owner", "tea dentist"); len(got) != 2 {
		t.Errorf("Recall(tea dentist) = %q; want the two units holding either word", got)
	}
}

func TestOwnersAreSeparate(t *testing.T) {
	m, _, _ := newMemory(t)
	remember(t, m, "alice", "alice likes oolong")
	remember(t, m, "bob", "bob likes coffee")
	if got := recall(t, m, "bob", "oolong"); len(got) != 0 {
		t.Errorf("bob recalled %q", got)
	}
	if got := recall(t, m, "bob", "likes"); !slices.Equal(got, []string{"bob likes coffee"}) {
		t.Errorf("bob recalled %q", got)
	}
	// Another owner's better matches crowd the ranked candidates out;
	// bob's unit is still found.
	for i := range 80 {
		remember(t, m, "alice", fmt.Sprintf("likes likes likes %d", i))
	}
	if got := recall(t, m, "bob", "likes"); !slices.Equal(got, []string{"bob likes coffee"}) {
		t.Errorf("bob recalled %q behind alice's units", got)
	}
	if _, err := m.Rebuild(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
	if got := recall(t, m, "bob", "coffee"); len(got) != 1 {
		t.Errorf("rebuilding alice's memory lost bob's: %q", got)
	}
	for _, bad := range []string{"", "../alice", "a/b", ".hidden", "a b", strings.Repeat("x", 65)} {
		if _, err := m.Recall(context.Background(), bad, "x", 1); !errors.Is(err, ErrOwner) {
			t.Errorf("Recall(owner %q) error = %v; want ErrOwner", bad, err)
		}
		if _, err := m.Remember(context.Background(), bad, Note{Text: "x"}); !errors.Is(err, ErrOwner) {
			t.Errorf("Remember(owner %q) error = %v; want ErrOwner", bad, err)
		}
	}
}

func TestFileIsTruth(t *testing.T) {
	m, st, c := newMemory(t)
	ctx := context.Background()
	tea := remember(t, m, "owner", "I prefer oolong tea")
	remember(t, m, "owner", "The cat is called Miso")
	p, _ := m.Path("owner")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("memory.md mode = %v; want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(p)); di.Mode().Perm() != 0o700 {
		t.Errorf("folder mode = %v; want 0700", di.Mode().Perm())
	}
	data, _ := os.ReadFile(p)
	if !strings.Contains(string(data), "## "+tea.ID+"\n- kind: fact\n") {
		t.Fatalf("memory.md does not hold the unit in its documented form:\n%s", data)
	}

	// Hand edits: change one unit, delete another, add one without an id.
	c.t = c.t.Add(time.Minute)
	edited := strings.Replace(string(data), "oolong tea", "green tea", 1)
	i := strings.Index(edited, "\n## m_")
	j := strings.Index(edited[i+1:], "\n## m_") + i + 1
	edited = edited[:j] // drops the cat
	edited += "\n## new\nThe wifi router is in the hall cupboard.\n"
	writeHand(t, p, edited)
	if got := recall(t, m, "owner", "oolong"); len(got) != 0 {
		t.Errorf("after the edit, Recall(oolong) = %q; want nothing", got)
	}
	if got := recall(t, m, "owner", "green"); !slices.Equal(got, []string{"I prefer green tea"}) {
		t.Errorf("after the edit, Recall(green) = %q", got)
	}
	if got := recall(t, m, "owner", "miso"); len(got) != 0 {
		t.Errorf("a deleted unit is still recalled: %q", got)
	}
	hits, _ := m.Recall(ctx, "owner", "router", 5)
	if len(hits) != 1 || !ValidID(hits[0].ID) {
		t.Fatalf("hand-added unit: %+v", hits)
	}
	handID := hits[0].ID

	// The next write gives the hand-added unit its id in the file.
	remember(t, m, "owner", "Trash goes out on Tuesday")
	data, _ = os.ReadFile(p)
	if !strings.Contains(string(data), "## "+handID+"\n") || strings.Contains(string(data), "\n## new\n") {
		t.Errorf("the hand-added unit did not get id %s:\n%s", handID, data)
	}

	// Rebuild gives the same results, and is idempotent.
	queries := []string{"tea", "router", "tuesday", "green tea"}
	before := map[string][]string{}
	for _, q := range queries {
		before[q] = recall(t, m, "owner", q)
	}
	for range 2 {
		if _, err := m.Rebuild(ctx, "owner"); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			if got := recall(t, m, "owner", q); !slices.Equal(got, before[q]) {
				t.Errorf("after rebuild, Recall(%q) = %q; want %q", q, got, before[q])
			}
		}
	}
	rows, _ := st.MemoryUnits(ctx, "owner")
	if len(rows) != 3 {
		t.Errorf("index holds %d units; want 3", len(rows))
	}
}

// writeHand writes the file as an editor would, with a later mtime.
func writeHand(t *testing.T, p, data string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(p, later, later)
}

func TestBrokenUnitIsKeptAndReported(t *testing.T) {
	m, _, _ := newMemory(t)
	ctx := context.Background()
	a := remember(t, m, "owner", "first unit")
	p, _ := m.Path("owner")
	data, _ := os.ReadFile(p)
	broken := string(data) + "\n## m_brokenunit1\n- kind: fact\n- expires: next tuesday\n\nexpiry is garbage\n"
	writeHand(t, p, broken)
	st, err := m.Status(ctx, "owner")
	if err != nil {
		t.Fatal(err)
	}
	if st.Drift == "" || len(st.Problems) != 1 || st.Problems[0].ID != "m_brokenunit1" {
		t.Errorf("Status = %+v; want drift and one problem", st)
	}
	if got := recall(t, m, "owner", "garbage"); len(got) != 0 {
		t.Errorf("a broken unit was indexed: %q", got)
	}
	// A write keeps the broken section exactly as it was.
	remember(t, m, "owner", "second unit")
	data, _ = os.ReadFile(p)
	if !strings.Contains(string(data), "## m_brokenunit1\n- kind: fact\n- expires: next tuesday\n\nexpiry is garbage\n") {
		t.Errorf("the broken section was not kept:\n%s", data)
	}
	st, _ = m.Status(ctx, "owner")
	if st.Drift != "" || st.Units != 2 || len(st.Problems) != 1 {
		t.Errorf("Status after write = %+v", st)
	}
	// Forget removes a unit, and a broken section by its id.
	for _, id := range []string{a.ID, "m_brokenunit1"} {
		if _, err := m.Forget(ctx, "owner", id); err != nil {
			t.Fatalf("Forget(%s): %v", id, err)
		}
	}
	if _, err := m.Forget(ctx, "owner", a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Forget error = %v; want ErrNotFound", err)
	}
	us, probs, _ := m.List(ctx, "owner")
	if !slices.Equal(texts(us), []string{"second unit"}) || len(probs) != 0 {
		t.Errorf("List = %q, %v", texts(us), probs)
	}
}

func TestExpiry(t *testing.T) {
	m, _, c := newMemory(t)
	ctx := context.Background()
	if _, err := m.Remember(ctx, "owner", Note{Text: "parking spot 42 this week", Kind: KindTask, TTL: 7 * 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	remember(t, m, "owner", "parking is free on Sundays")
	if got := recall(t, m, "owner", "parking"); len(got) != 2 {
		t.Fatalf("Recall before expiry = %q", got)
	}
	c.t = c.t.Add(8 * 24 * time.Hour)
	if got := recall(t, m, "owner", "parking"); !slices.Equal(got, []string{"parking is free on Sundays"}) {
		t.Errorf("Recall after expiry = %q", got)
	}
	if got := recall(t, m, "owner", "spot"); len(got) != 0 {
		t.Errorf("expired unit recalled: %q", got)
	}
	us, _, _ := m.List(ctx, "owner")
	if len(us) != 2 || !us[0].Expired(c.t) {
		t.Errorf("List keeps expired units, marked: %+v", us)
	}
}

func TestSecretsAreRefused(t *testing.T) {
	m, st, _ := newMemory(t)
	ctx := context.Background()
	for _, s := range []string{
		"my AWS key is AKIAIOSFODNN7EXAMPLE",
		"my one-time code is 483920",
		"OTP: 1234",
		"验证码 483920",
		"483920 is the 2FA code",
	} {
		if _, err := m.Remember(ctx, "owner", Note{Text: s}); !errors.Is(err, ErrSecret) {
			t.Errorf("Remember(%q) error = %v; want ErrSecret", s, err)
		} else if strings.Contains(err.Error(), "483920") || strings.Contains(err.Error(), "AKIA") {
			t.Errorf("the error quotes the secret: %v", err)
		}
	}
	p, _ := m.Path("owner")
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("memory.md exists after refusals: %v", err)
	}
	if n, _ := st.MemoryUnits(ctx, "owner"); len(n) != 0 {
		t.Errorf("index holds %d units", len(n))
	}
	for _, s := range []string{"my zip code is 94110", "code freeze on 2026-12-01", "the meeting code review at 10:30", "pin the tab"} {
		if _, err := m.Remember(ctx, "owner", Note{Text: s}); err != nil {
			t.Errorf("Remember(%q) = %v; want it kept", s, err)
		}
	}
}

func TestParseTolerance(t *testing.T) {
	fallback := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	doc := parse(`# My memory
stray text before the first unit

## m_aaaa1111
kind: Preference
created: 2026-11-01
source: session s1

Likes tea.

## I like long walks

##
- kind: task

Call mum on Sunday.
second line

## m_aaaa1111
duplicate id

## m_bbbb2222
- kind: wish

unknown kind
`, fallback)
	us, probs := doc.units(), doc.problems()
	if len(us) != 3 || len(probs) != 2 {
		t.Fatalf("units %+v problems %+v", us, probs)
	}
	if us[0].Kind != KindPreference || us[0].Source != "session s1" || !us[0].Created.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("unit 0 = %+v", us[0])
	}
	if us[1].Text != "I like long walks" || !us[1].NoID || !us[1].Created.Equal(fallback) {
		t.Errorf("unit 1 = %+v", us[1])
	}
	if us[2].Kind != KindTask || us[2].Text != "Call mum on Sunday.\nsecond line" {
		t.Errorf("unit 2 = %+v", us[2])
	}
	if probs[0].Line != 19 || !strings.Contains(probs[1].Reason, "unknown kind") {
		t.Errorf("problems = %v", probs)
	}
	// Formatting and parsing again is stable.
	again := parse(string(doc.format()), fallback)
	if !slices.Equal(ids(again.units()), ids(us)) || !slices.Equal(texts(again.units()), texts(us)) || len(again.problems()) != 2 {
		t.Errorf("round trip: %+v %+v", again.units(), again.problems())
	}
}

// An edit that keeps the size and lands within the file system's
// timestamp granularity (same mtime) is still seen right after a write.
func TestRacyEditIsSeen(t *testing.T) {
	m, _, _ := newMemory(t)
	remember(t, m, "owner", "the code word is alpha")
	p, _ := m.Path("owner")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), "alpha", "gamma", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := recall(t, m, "owner", "gamma"); len(got) != 1 {
		t.Errorf("Recall(gamma) = %q after a same-size, same-mtime edit", got)
	}
}

// Concurrent remembers (two Memory values stand for two processes sharing
// the folder and the database) lose nothing.
func TestConcurrentRemember(t *testing.T) {
	m1, st, c := newMemory(t)
	m2 := New(Options{Dir: m1.o.Dir, Store: st, Secret: fakeSecret, Now: c.now})
	done := make(chan error)
	for i := range 20 {
		go func() {
			m := m1
			if i%2 == 1 {
				m = m2
			}
			_, err := m.Remember(context.Background(), "owner", Note{Text: fmt.Sprintf("note number %d", i)})
			done <- err
		}()
	}
	for range 20 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	us, probs, err := m1.List(context.Background(), "owner")
	if err != nil || len(us) != 20 || len(probs) != 0 {
		t.Fatalf("List = %d units, %v, %v; want 20", len(us), probs, err)
	}
	if got := recall(t, m2, "owner", "note"); len(got) != 10 {
		t.Errorf("Recall(note) = %d hits; want 10 (the limit)", len(got))
	}
}
