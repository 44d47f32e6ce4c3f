package tools

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/memory"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store/storetest"
	"github.com/homard/homard/internal/tool"
)

func newMemoryTools(t *testing.T) (*memory.Memory, map[string]tool.Tool) {
	t.Helper()
	dir := t.TempDir()
	st := storetest.Open(t)
	m := memory.New(memory.Options{Dir: filepath.Join(dir, "memory"), Store: st,
		Secret: func(string) (string, bool) { return "", false }})
	out := map[string]tool.Tool{}
	for _, tl := range MemoryTools(m) {
		out[tl.Spec().Name] = tl
	}
	return m, out
}

func TestMemoryToolsNeedTheOwner(t *testing.T) {
	_, tools := newMemoryTools(t)
	args := map[string]string{"remember": `{"text":"x"}`, "recall": `{"query":"x"}`, "forget": `{"id":"m_0123456789ab"}`}
	callers := []struct {
		name string
		ctx  context.Context
	}{
		{"no caller", context.Background()},
		{"guest", tool.WithCaller(context.Background(), tool.Caller{Owner: "owner", Session: "s", Trust: policy.TrustGuest})},
		{"unknown", tool.WithCaller(context.Background(), tool.Caller{Owner: "owner", Session: "s", Trust: policy.TrustUnknown})},
		{"owner with a path for a name", tool.WithCaller(context.Background(), tool.Caller{Owner: "../x", Session: "s", Trust: policy.TrustOwner})},
	}
	for name, tl := range tools {
		params, err := tl.Decode([]byte(args[name]))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range callers {
			_, err := tl.Prepare(c.ctx, params)
			var ref *tool.Refusal
			if !errors.As(err, &ref) || ref.Rule != "limit.memory-owner" {
				t.Errorf("%s as %s: Prepare error = %v; want limit.memory-owner", name, c.name, err)
			}
		}
	}
}

func TestRunRechecksTheCaller(t *testing.T) {
	_, tools := newMemoryTools(t)
	owner := tool.WithCaller(context.Background(), tool.Caller{Owner: "owner", Session: "s", Trust: policy.TrustOwner})
	other := tool.WithCaller(context.Background(), tool.Caller{Owner: "someone", Session: "s", Trust: policy.TrustOwner})
	rem := tools["remember"]
	params, _ := rem.Decode([]byte(`{"text":"the cat is called Miso","kind":"fact","ttl_days":3}`))
	plan, err := rem.Prepare(owner, params)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := rem.Run(other, plan); err != nil || !res.IsError {
		t.Errorf("Run as another owner = %+v, %v; want an error result", res, err)
	}
	if res, err := rem.Run(owner, plan); err != nil || res.IsError || !strings.HasPrefix(res.Text, "remembered m_") {
		t.Errorf("Run as the owner = %+v, %v", res, err)
	}
}

func TestFormatRecallBudget(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var units []memory.Unit
	for i := range 20 {
		units = append(units, memory.Unit{ID: "m_00000000000" + string(rune('a'+i%6)), Kind: memory.KindFact,
			Source: "owner", Updated: day, Text: strings.Repeat("乌龙茶很好喝。", 30)})
	}
	out := FormatRecall(units, RecallBudget)
	if n := utf8.RuneCountInString(out); n > RecallBudget+200 {
		t.Errorf("FormatRecall is %d characters; budget %d", n, RecallBudget)
	}
	if !strings.Contains(out, "m_00000000000a (2026-11-30, fact, source: owner): 乌龙茶") || !strings.Contains(out, "more units not shown") {
		t.Errorf("FormatRecall = %s", out)
	}
}
