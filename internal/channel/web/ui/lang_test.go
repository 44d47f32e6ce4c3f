package ui_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestApprovalCardInChinese (issue 26 point 3): with lang = "zh" the
// page's own labels and the approval card's buttons, labels and status
// are Chinese, while the plan, the tool, the risk and the hash (values,
// not homard's words) are shown exactly as they are; the answer posted
// is the API's English choice. A screenshot of the card is written to
// the test's temp dir. Its twin: with lang = "auto" in an English
// browser the same card reads in English.
func TestApprovalCardInChinese(t *testing.T) {
	for _, tc := range []struct {
		setting   string
		htmlLang  string
		buttons   []string
		nav, plan string
		pending   string
	}{
		{"zh", "zh-Hans", []string{"批准一次", "本会话", "始终", "拒绝"}, "聊天", "将要运行的确切内容：", "待定"},
		{"auto", "en", []string{"Approve once", "This session", "Always", "Deny"}, "Chat", "Exactly what will run:", "pending"},
	} {
		t.Run(tc.setting, func(t *testing.T) {
			shots := t.TempDir()
			t.Setenv("HOMARD_TEST_ARTIFACTS", shots)
			f := newFakeServer(t, true, askScript(nil, "medium"))
			f.mu.Lock()
			f.lang = tc.setting
			f.mu.Unlock()
			p := newPage(t, f, 1200, 900, false)
			p.login()
			if got := eval[string](p, `document.documentElement.lang`); got != tc.htmlLang {
				t.Errorf("<html lang> = %q; want %q", got, tc.htmlLang)
			}
			if got := eval[string](p, `document.querySelector('nav a[data-view="chat"]').textContent`); got != tc.nav {
				t.Errorf("the Chat view's link reads %q; want %q", got, tc.nav)
			}
			if got := eval[string](p, `document.querySelector('#approval-status option[value="pending"]').textContent`); got != tc.pending {
				t.Errorf("the pending filter reads %q; want %q (its value stays pending)", got, tc.pending)
			}
			p.sendMessage("List my notes folder")
			recv(t, f.messages, "the chat message")
			card := `#transcript .card[data-approval-id="ap-1"]`
			p.waitFor("the approval card", `document.querySelector('`+card+`[data-status="pending"]')`)
			labels := eval[[]string](p, `[...document.querySelectorAll('`+card+` .actions button')].map(b => b.textContent)`)
			if fmt.Sprint(labels) != fmt.Sprint(tc.buttons) {
				t.Errorf("card buttons are %q; want %q", labels, tc.buttons)
			}
			if got := eval[string](p, `document.querySelector('`+card+` p.label').textContent`); got != tc.plan {
				t.Errorf("the plan's label reads %q; want %q", got, tc.plan)
			}
			if plan := eval[string](p, `document.querySelector('`+card+` pre.plan').textContent`); plan != lsPlan {
				t.Errorf("the card's plan is %q; want exactly %q", plan, lsPlan)
			}
			text := eval[string](p, `document.querySelector('`+card+`').textContent`)
			for _, want := range []string{"run_command", "medium", "3f2a9c1b7d4e"} {
				if !strings.Contains(text, want) {
					t.Errorf("the card does not show %q as it is:\n%s", want, text)
				}
			}
			p.screenshot(card, "approval-card-"+tc.setting+".png")
			if fi, err := os.Stat(filepath.Join(shots, "approval-card-"+tc.setting+".png")); err != nil || fi.Size() == 0 {
				t.Errorf("screenshot: %v (size %d); want a picture of the card", err, sizeOf(fi))
			}
			p.do(chromedp.Click(chromedp.CSS(card + ` button[data-choice="once"]`)))
			if got := recv(t, f.choices, "the approval answer"); got != (choiceMsg{id: "ap-1", choice: "once"}) {
				t.Fatalf("server got answer %+v; want ap-1 once (the API's words)", got)
			}
			p.waitFor("the end of the turn", `document.querySelector("#transcript .usage")`)
		})
	}
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return 0
	}
	return fi.Size()
}
