package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
)

// TestApprovalCardInChinese (issue 26 point 3): with lang zh the card's
// labels, its keys line, the answer mark and the footer are Chinese,
// while the plan, the tool, the risk, the id, the hash and the reason
// (values, not homard's words) are shown exactly as they are, and the
// turn tells the runtime the owner reads Chinese (TurnRequest.Lang).
// Its twin below: English, as TestApprovalCardAnsweredFromTheKeyboard
// sees it.
func TestApprovalCardInChinese(t *testing.T) {
	for _, tc := range []struct {
		tag                  lang.Tag
		card, keys, footer   string
		mark, reqLang, other string
	}{
		{lang.ZH, "需要批准：write_file · 风险 medium · ap_test1", "[o] 一次 · [s] 本会话 · [a] 始终 · [d] 拒绝", "Enter 发送",
			"→ 已批准一次", "zh", "approval needed"},
		{lang.EN, "approval needed: write_file · risk medium · ap_test1", "[o]nce · [s]ession · [a]lways · [d]eny", "Enter send",
			"→ approved once", "en", "需要批准"},
	} {
		t.Run(tc.tag.String(), func(t *testing.T) {
			got := make(chan channel.Choice, 1)
			rt := &fakeRuntime{turn: approvalTurn("medium", got)}
			m := newModel(context.Background(), rt, "chat", nil, lang.For(tc.tag))
			t.Cleanup(m.Close)
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
			typeLine(tm, "add tea")
			hash := map[lang.Tag]string{lang.ZH: "计划哈希 0123456789ab · 15:04 过期", lang.EN: "plan hash 0123456789ab · expires 15:04"}[tc.tag]
			waitFor(t, tm, tc.card, "write todo.md (6 bytes)", "+ - tea", hash, "writes need approval in smart mode", tc.keys)
			tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("o")})
			select {
			case c := <-got:
				if c != channel.Once {
					t.Fatalf("Ask returned %q; want once", c)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Ask did not return after the key")
			}
			waitFor(t, tm, "answer after once", tc.footer)
			typeLine(tm, "/exit")
			_, v := finalView(t, tm)
			if !strings.Contains(v, tc.mark) || !strings.Contains(v, tc.footer) || strings.Contains(v, tc.other) {
				t.Errorf("screen lacks %q or %q, or shows %q:\n%s", tc.mark, tc.footer, tc.other, v)
			}
			rt.mu.Lock()
			defer rt.mu.Unlock()
			if rt.reqs[0].Lang != tc.reqLang {
				t.Errorf("TurnRequest.Lang = %q; want %q", rt.reqs[0].Lang, tc.reqLang)
			}
		})
	}
}
