package task

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/split"
)

var (
	t0  = time.Date(2026, 3, 1, 7, 0, 0, 0, time.UTC)
	key = bytes.Repeat([]byte{0x42}, 32)
)

func sample() Body {
	return Body{
		ID: "task_0123456789abcdef", Owner: "owner", Name: "morning digest",
		Prompt:  "Summarise the new files in ~/inbox.",
		Sched:   Schedule{Kind: KindCron, Expr: "30 7 * * 1-5", TZ: "Europe/Paris"},
		CatchUp: CatchUpSkip,
		Tools:   []string{"read_file", "list_files"},
		Mode:    policy.ModeSafe,
		Budgets: Budgets{MaxCalls: 20, MaxTurns: 10, MaxTokens: 50000, MaxRuntime: 5 * time.Minute},
		Deliver: "web",
		Expires: t0.Add(DefaultExpiry),
	}
}

// changes holds one change of every sealed field; TestEveryFieldIsSealed
// fails when Body gains a field without a line here.
var changes = map[string]func(*Body){
	"ID":                 func(b *Body) { b.ID = "task_fedcba9876543210" },
	"Owner":              func(b *Body) { b.Owner = "mallory" },
	"Name":               func(b *Body) { b.Name = "evening digest" },
	"Prompt":             func(b *Body) { b.Prompt += " Then delete them." },
	"Sched.Kind":         func(b *Body) { b.Sched.Kind = KindEvery },
	"Sched.Expr":         func(b *Body) { b.Sched.Expr = "*/5 * * * *" },
	"Sched.TZ":           func(b *Body) { b.Sched.TZ = "America/New_York" },
	"CatchUp":            func(b *Body) { b.CatchUp = CatchUpOnce },
	"Tools":              func(b *Body) { b.Tools = append(b.Tools, "run_command") },
	"Mode":               func(b *Body) { b.Mode = policy.ModeYolo },
	"Budgets.MaxCalls":   func(b *Body) { b.Budgets.MaxCalls = 2000 },
	"Budgets.MaxTurns":   func(b *Body) { b.Budgets.MaxTurns = 11 },
	"Budgets.MaxTokens":  func(b *Body) { b.Budgets.MaxTokens = 50001 },
	"Budgets.MaxRuntime": func(b *Body) { b.Budgets.MaxRuntime += time.Second },
	"Deliver":            func(b *Body) { b.Deliver = "telegram" },
	"Expires":            func(b *Body) { b.Expires = b.Expires.Add(time.Nanosecond) },
	"Ceiling.Reach":      func(b *Body) { b.Ceiling = policy.Ceiling{Reach: policy.ReachWrite} },
	"Ceiling.Hosts": func(b *Body) {
		b.Ceiling = policy.Ceiling{Reach: policy.ReachNetwork, Hosts: []string{"api.weather.example"}}
	},
	// A split task has no tool profile; TestPlanIsSealed changes each
	// part of a plan.
	"Split": func(b *Body) { b.Tools, b.Split = []string{}, samplePlan() },
	// A reminder has no tool profile either.
	"Reminder": func(b *Body) { b.Tools, b.Reminder = []string{}, true },
}

func leafFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name := prefix + f.Name
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Time]() {
			out = append(out, leafFields(f.Type, name+".")...)
			continue
		}
		out = append(out, name)
	}
	return out
}

func TestEveryFieldIsSealed(t *testing.T) {
	base := sample()
	sealed, err := Seal(key, base)
	if err != nil {
		t.Fatalf("Seal(sample): %v", err)
	}
	if err := Verify(key, base, sealed); err != nil {
		t.Fatalf("Verify(sample, its own seal) = %v; want nil", err)
	}
	for _, field := range leafFields(reflect.TypeFor[Body](), "") {
		change, ok := changes[field]
		if !ok {
			t.Errorf("Body.%s has no case in changes: add one, so a change of it is shown to break the seal", field)
			continue
		}
		t.Run(field, func(t *testing.T) {
			b := sample()
			change(&b)
			if err := b.Validate(); err != nil {
				t.Fatalf("the changed body is invalid (%v); change it to another valid value", err)
			}
			if err := Verify(key, b, sealed); !errors.Is(err, ErrBodyChanged) {
				t.Errorf("Verify(body with %s changed, old seal) = %v; want ErrBodyChanged", field, err)
			}
			resealed, err := Seal(key, b)
			if err != nil || resealed == sealed {
				t.Errorf("Seal(body with %s changed) = %s, %v; want a seal other than %s", field, resealed, err, sealed)
			}
			if err := Verify(key, b, resealed); err != nil {
				t.Errorf("Verify(changed body, its own seal) = %v; want nil", err)
			}
		})
	}
}

// TestSealIgnoresRepresentation: what is not a change of the approved
// body — the tool profile's order and repeats, the expiry's zone — does
// not change the seal.
func TestSealIgnoresRepresentation(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Seal(key, sample())
	if err != nil {
		t.Fatal(err)
	}
	for name, change := range map[string]func(*Body){
		"tools reordered": func(b *Body) { b.Tools = []string{"list_files", "read_file"} },
		"tools repeated":  func(b *Body) { b.Tools = []string{"read_file", "list_files", "read_file"} },
		"expiry in Paris": func(b *Body) { b.Expires = b.Expires.In(paris) },
	} {
		b := sample()
		change(&b)
		if got, err := Seal(key, b); err != nil || got != want {
			t.Errorf("%s: Seal = %s, %v; want %s", name, got, err, want)
		}
	}
}

func TestVerify(t *testing.T) {
	b := sample()
	sealed, err := Seal(key, b)
	if err != nil {
		t.Fatal(err)
	}
	otherKey := bytes.Repeat([]byte{0x43}, 32)
	for _, c := range []struct {
		name   string
		key    []byte
		sealed string
		want   error
	}{
		{"its own seal", key, sealed, nil},
		{"no seal", key, "", ErrNotApproved},
		{"another vault's key", otherKey, sealed, ErrBodyChanged},
		{"one digit changed", key, flip(sealed), ErrBodyChanged},
		{"upper case", key, strings.ToUpper(sealed), ErrBodyChanged},
		{"a prefix", key, sealed[:32], ErrBodyChanged},
		{"plain SHA-256 of the body", key, mustHash(t, b), ErrBodyChanged},
	} {
		if err := Verify(c.key, b, c.sealed); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("Verify(%s) = %v; want %v", c.name, err, c.want)
		}
	}
	if _, err := Seal(key[:16], b); err == nil {
		t.Error("Seal with a 16-byte key succeeded; want an error")
	}
}

func flip(hexs string) string {
	c := byte('0')
	if hexs[0] == '0' {
		c = '1'
	}
	return string(c) + hexs[1:]
}

func mustHash(t *testing.T, b Body) string {
	t.Helper()
	h, err := Hash(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestSealRefusesInvalidBodies(t *testing.T) {
	for name, change := range map[string]func(*Body){
		"no id":            func(b *Body) { b.ID = "" },
		"no owner":         func(b *Body) { b.Owner = "" },
		"no prompt":        func(b *Body) { b.Prompt = "" },
		"long prompt":      func(b *Body) { b.Prompt = strings.Repeat("x", MaxPrompt+1) },
		"kind":             func(b *Body) { b.Sched.Kind = "hourly" },
		"no expression":    func(b *Body) { b.Sched.Expr = "" },
		"catch-up":         func(b *Body) { b.CatchUp = "all" },
		"mode":             func(b *Body) { b.Mode = "root" },
		"empty tool":       func(b *Body) { b.Tools = []string{""} },
		"negative calls":   func(b *Body) { b.Budgets.MaxCalls = -1 },
		"huge tokens":      func(b *Body) { b.Budgets.MaxTokens = 1 << 60 },
		"runtime too long": func(b *Body) { b.Budgets.MaxRuntime = 25 * time.Hour },
		"no delivery":      func(b *Body) { b.Deliver = "" },
		"no expiry":        func(b *Body) { b.Expires = time.Time{} },
	} {
		b := sample()
		change(&b)
		if s, err := Seal(key, b); !errors.Is(err, ErrInvalid) {
			t.Errorf("Seal(%s) = %q, %v; want ErrInvalid", name, s, err)
		}
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	b := sample()
	c, err := b.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"budgets":{"max_calls":20,"max_runtime":"5m0s","max_tokens":50000,"max_turns":10},"catch_up":"skip",` +
		`"deliver":"web","expires":"2026-03-11T07:00:00Z","id":"task_0123456789abcdef","mode":"safe","name":"morning digest",` +
		`"owner":"owner","prompt":"Summarise the new files in ~/inbox.","schedule":{"expr":"30 7 * * 1-5","kind":"cron","tz":"Europe/Paris"},` +
		`"tools":["list_files","read_file"],"v":1}`
	if string(c) != want {
		t.Errorf("Canonical =\n%s\nwant\n%s", c, want)
	}
	back, err := Decode(c)
	if err != nil {
		t.Fatalf("Decode(Canonical): %v", err)
	}
	again, err := back.Canonical()
	if err != nil || !bytes.Equal(again, c) {
		t.Errorf("Canonical(Decode(c)) = %s, %v; want c", again, err)
	}
	if !back.Expires.Equal(b.Expires) || back.Budgets.MaxRuntime != b.Budgets.MaxRuntime {
		t.Errorf("Decode lost the expiry or the runtime: %+v", back)
	}
}

func TestDecodeRejects(t *testing.T) {
	c, err := sample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"unknown field":  strings.Replace(string(c), `"v":1`, `"v":1,"admin":true`, 1),
		"repeated field": strings.Replace(string(c), `"v":1`, `"v":1,"prompt":"rm -rf ~"`, 1),
		"missing field":  strings.Replace(string(c), `"deliver":"web",`, ``, 1),
		"other version":  strings.Replace(string(c), `"v":1`, `"v":2`, 1),
		"bad runtime":    strings.Replace(string(c), `"5m0s"`, `"five"`, 1),
		"bad expiry":     strings.Replace(string(c), `"2026-03-11T07:00:00Z"`, `"tomorrow"`, 1),
		"not JSON":       `{"v":1`,
	} {
		if _, err := Decode([]byte(raw)); err == nil {
			t.Errorf("Decode(%s) succeeded; want an error", name)
		}
	}
}

func TestNewID(t *testing.T) {
	a, b := NewID(), NewID()
	if a == b || !strings.HasPrefix(a, "task_") || len(a) != len("task_")+16 {
		t.Errorf("NewID = %q, %q; want two different task_ and 16 hex digits", a, b)
	}
}

// sampleHash is the SHA-256 of sample()'s canonical form, computed on the
// code before bodies had a ceiling. Owners approved such bodies by this
// hash and their seals are HMACs of the same bytes: a body without a
// ceiling must keep them, or every task approved before would stop.
const sampleHash = "0a9d754e47567ab9c0167df33abe47e9207a8a19cf16c011b839a3dc508e040b"

func TestCeilinglessBodyKeepsItsHash(t *testing.T) {
	if got := mustHash(t, sample()); got != sampleHash {
		t.Errorf("Hash(sample without a ceiling) = %s; want %s, its hash before ceilings existed", got, sampleHash)
	}
	c, err := sample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(c), "ceiling") {
		t.Errorf("Canonical(sample without a ceiling) = %s; want no ceiling key", c)
	}
	back, err := Decode(c)
	if err != nil || !back.Ceiling.IsZero() {
		t.Errorf("Decode(old body) = ceiling %q, %v; want none", back.Ceiling, err)
	}
}

func TestCeilingIsSealed(t *testing.T) {
	seen := map[string]string{sampleHash: "none"}
	for _, s := range []string{"read", "write", "network", "network:api.weather.example", "network:*.example.org,api.weather.example", "send"} {
		b := sample()
		c, err := policy.ParseCeiling(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Ceiling = c
		h := mustHash(t, b)
		if other, dup := seen[h]; dup {
			t.Errorf("ceiling %q hashes as ceiling %q (%s); want a hash of its own", s, other, h)
		}
		seen[h] = s
		canon, err := b.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if want := `"ceiling":"` + s + `"`; !strings.Contains(string(canon), want) {
			t.Errorf("Canonical = %s; want it to hold %s", canon, want)
		}
		back, err := Decode(canon)
		if err != nil || back.Ceiling.String() != s {
			t.Errorf("Decode(Canonical) ceiling = %q, %v; want %q", back.Ceiling, err, s)
		}
		if again, err := back.Canonical(); err != nil || !bytes.Equal(again, canon) {
			t.Errorf("Canonical(Decode(c)) = %s, %v; want c", again, err)
		}
	}
	// A stored ceiling that does not parse, or is not in canonical
	// spelling, does not pass for the sealed one.
	c, err := sample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"everything", "write:a.example", "network:*.com"} {
		raw := strings.Replace(string(c), `"v":1`, `"ceiling":"`+bad+`","v":1`, 1)
		if _, err := Decode([]byte(raw)); err == nil {
			t.Errorf("Decode(ceiling %q) succeeded; want an error", bad)
		}
	}
	b := sample()
	b.Ceiling = policy.Ceiling{Reach: policy.ReachNetwork, Hosts: []string{"b.example", "a.example"}}
	if _, err := Seal(key, b); !errors.Is(err, ErrInvalid) {
		t.Errorf("Seal(hosts out of order) = %v; want ErrInvalid", err)
	}
	b.Ceiling = policy.Ceiling{Reach: policy.ReachRead, Hosts: []string{"a.example"}}
	if _, err := Seal(key, b); !errors.Is(err, ErrInvalid) {
		t.Errorf("Seal(read with hosts) = %v; want ErrInvalid", err)
	}
}

// ceilingHash is the SHA-256 of sample() with a network:api.weather.example
// ceiling, computed on the code before bodies could hold a plan: a body
// without a plan keeps it (and so its seal and its approval).
const ceilingHash = "4c022ad71e2aa46a95df8c64cfbb91ded9f575585e9945b6203d64475b94e3bc"

func TestPlanlessBodyKeepsItsHash(t *testing.T) {
	b := sample()
	b.Ceiling = policy.Ceiling{Reach: policy.ReachNetwork, Hosts: []string{"api.weather.example"}}
	for name, c := range map[string]struct {
		b    Body
		want string
	}{"no ceiling": {sample(), sampleHash}, "a ceiling": {b, ceilingHash}} {
		if got := mustHash(t, c.b); got != c.want {
			t.Errorf("%s: Hash(body without a plan) = %s; want %s, its hash before plans existed", name, got, c.want)
		}
		canon, err := c.b.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(canon), "split") {
			t.Errorf("%s: Canonical(body without a plan) = %s; want no split key", name, canon)
		}
		if back, err := Decode(canon); err != nil || back.Split != nil {
			t.Errorf("%s: Decode(old body) = plan %v, %v; want none", name, back.Split, err)
		}
	}
}

// samplePlan is a plan as split.Parse gives it: normal form.
func samplePlan() *split.Plan {
	return &split.Plan{Items: []split.Item{
		{ID: "rate", Kind: split.Public, Task: "What is today's EUR to CHF rate?", Returns: split.Returns{Type: split.Number}},
		{ID: "bill", Kind: split.Sensitive, Task: "Read notes/bill.txt; give the amount in EUR.", Hosts: []string{"bank.example"},
			Returns: split.Returns{Type: split.URL, Allow: []string{"bank.example"}}},
	}}
}

func splitSample() Body {
	b := sample()
	b.Tools, b.Split = []string{}, samplePlan()
	return b
}

// TestPlanIsSealed: the plan is part of what is sealed — every part of
// it changes the hash and breaks the seal — and it round-trips through
// the canonical form unchanged.
func TestPlanIsSealed(t *testing.T) {
	base := splitSample()
	sealed, err := Seal(key, base)
	if err != nil {
		t.Fatalf("Seal(split task): %v", err)
	}
	canon, err := base.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(canon), `"split":{"items":[{"id":"rate","kind":"public"`) {
		t.Errorf("Canonical = %s; want the plan under split", canon)
	}
	back, err := Decode(canon)
	if err != nil || back.Split == nil || back.Split.Hash() != base.Split.Hash() {
		t.Fatalf("Decode(Canonical) plan = %+v, %v; want the plan", back.Split, err)
	}
	if again, err := back.Canonical(); err != nil || !bytes.Equal(again, canon) {
		t.Errorf("Canonical(Decode(c)) = %s, %v; want c", again, err)
	}
	if mustHash(t, base) == mustHash(t, sample()) {
		t.Error("a plan does not change the body's hash")
	}
	for name, change := range map[string]func(p *split.Plan){
		"item task":   func(p *split.Plan) { p.Items[0].Task += " And email it to me." },
		"item kind":   func(p *split.Plan) { p.Items[0].Kind = split.Sensitive },
		"item id":     func(p *split.Plan) { p.Items[0].ID = "rate2" },
		"hosts":       func(p *split.Plan) { p.Items[1].Hosts = []string{"bank.example", "evil.example"} },
		"return type": func(p *split.Plan) { p.Items[0].Returns.Type = split.Text },
		"allow":       func(p *split.Plan) { p.Items[1].Returns.Allow = []string{"evil.example"} },
		"an item more": func(p *split.Plan) {
			p.Items = append(p.Items, split.Item{ID: "x", Kind: split.Public, Task: "Anything.", Returns: split.Returns{Type: split.Text}})
		},
		"an item less": func(p *split.Plan) { p.Items = p.Items[:1] },
	} {
		b := splitSample()
		change(b.Split)
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: the changed body is invalid (%v)", name, err)
		}
		if err := Verify(key, b, sealed); !errors.Is(err, ErrBodyChanged) {
			t.Errorf("Verify(plan with %s changed, old seal) = %v; want ErrBodyChanged", name, err)
		}
	}
}

func TestSplitBodyRejects(t *testing.T) {
	for name, change := range map[string]func(b *Body){
		"tools too":      func(b *Body) { b.Tools = []string{"read_file"} },
		"a question":     func(b *Body) { b.Split = &split.Plan{Question: "Which bill?"} },
		"no items":       func(b *Body) { b.Split = &split.Plan{} },
		"bad kind":       func(b *Body) { b.Split.Items[0].Kind = "private" },
		"public hosts":   func(b *Body) { b.Split.Items[0].Hosts = []string{"a.example"} },
		"hosts unnormal": func(b *Body) { b.Split.Items[1].Hosts = []string{"Bank.example"} },
	} {
		b := splitSample()
		change(&b)
		if s, err := Seal(key, b); !errors.Is(err, ErrInvalid) {
			t.Errorf("Seal(split task, %s) = %q, %v; want ErrInvalid", name, s, err)
		}
	}
	// A stored plan edited in the database: an unknown key, a missing
	// one, or any edit of a sealed plan, is refused as the other fields.
	c, err := splitSample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"unknown key in plan": strings.Replace(string(c), `"split":{`, `"split":{"admin":true,`, 1),
		"unknown key in item": strings.Replace(string(c), `{"id":"rate",`, `{"id":"rate","tools":["send_message"],`, 1),
		"item without task":   strings.Replace(string(c), `,"task":"What is today's EUR to CHF rate?"`, ``, 1),
		"plan a string":       string(c[:strings.Index(string(c), `"split":`)]) + `"split":"{}",` + string(c[strings.Index(string(c), `"tools":`):]),
	} {
		if raw == string(c) {
			t.Fatalf("%s: the edit did not apply to %s", name, c)
		}
		if _, err := Decode([]byte(raw)); err == nil {
			t.Errorf("Decode(%s) succeeded; want an error", name)
		}
	}
}

// TestReminderBody: a reminder seals with no tools and no plan, its text
// at most MaxReminder bytes; with tools, a plan or a longer text it is
// refused. Its canonical form carries "reminder":true, which Decode
// reads back (a body without it is not a reminder: TestCeilinglessBodyKeepsItsHash
// holds the bytes of one sealed before reminders existed).
func TestReminderBody(t *testing.T) {
	remind := func() Body {
		b := sample()
		b.Tools, b.Reminder, b.Prompt = []string{}, true, "Call mum."
		return b
	}
	if _, err := Seal(key, remind()); err != nil {
		t.Fatalf("Seal(reminder) = %v", err)
	}
	for name, change := range map[string]func(b *Body){
		"tools":     func(b *Body) { b.Tools = []string{"read_file"} },
		"a plan":    func(b *Body) { b.Split = samplePlan() },
		"long text": func(b *Body) { b.Prompt = strings.Repeat("x", MaxReminder+1) },
		"no text":   func(b *Body) { b.Prompt = "" },
	} {
		b := remind()
		change(&b)
		if s, err := Seal(key, b); !errors.Is(err, ErrInvalid) {
			t.Errorf("Seal(reminder with %s) = %q, %v; want ErrInvalid", name, s, err)
		}
	}
	c, err := remind().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	d, err := Decode(c)
	if err != nil || !d.Reminder || !strings.Contains(string(c), `"reminder":true`) {
		t.Errorf("Decode(%s) = %+v, %v; want a reminder", c, d, err)
	}
}
