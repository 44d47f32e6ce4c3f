package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/homard/homard/internal/llm/llmtest"
)

// TestRunCardInChinese: with LANG=zh_CN.UTF-8 the approval card `homard
// run --ask always` shows on stderr, and its prompt, are Chinese; the
// tool, the plan, the answer letters and the id are as they are, and a
// control character in the preview stays inert. The twin: LANG=C is
// English, as it was.
func TestRunCardInChinese(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-CLIKEY0123456789")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	for _, tc := range []struct {
		lang      string
		want, not []string
	}{
		{"zh_CN.UTF-8",
			[]string{"── 需要审批：write_file (风险 medium) ─ ap_", "   write a.md", "   ─ 它做什么 ─", `+- tea\x1b[2J`, "   计划哈希 ",
				"   批准一次 [o]、本会话 [s]、始终 [a](限定范围的规则)、拒绝 [d]，或按 Enter 暂不处理："},
			[]string{"approval needed", "plan hash", "approve [o]nce", "\x1b"}},
		{"C",
			[]string{"── approval needed: write_file (risk medium) ─ ap_", "   write a.md", "   ─ what it does ─", `+- tea\x1b[2J`, "   plan hash ",
				"   approve [o]nce, this [s]ession, [a]lways (scoped rule), [d]eny, or Enter to leave it pending:"},
			[]string{"需要审批", "计划哈希", "批准", "\x1b"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			t.Setenv("LANG", tc.lang)
			srv := llmtest.NewServer(
				llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Calls: []llmtest.CallScript{{ID: "c1", Name: "write_file",
					Fragments: []string{`{"path":"a.md","content":"- tea\u001b[2J\n"}`}}}})},
				llmtest.Reply{Chunks: llmtest.OpenAIStream(llmtest.Turn{Text: []string{"Wrote a.md."}})},
			)
			defer srv.Close()
			home := t.TempDir()
			useTestStore(t, home)
			homard := func(stdin string, args ...string) (int, string, string) {
				var out, errb bytes.Buffer
				code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
				return code, out.String(), errb.String()
			}
			if code, _, stderr := homard("", "init", "--base-url", srv.URL+"/v1"); code != 0 {
				t.Fatalf("init: exit %d: %s", code, stderr)
			}
			captureOff(t, home)
			code, out, stderr := homard("o\n", "run", "--ask", "always", "note tea")
			if code != exitOK || out != "Wrote a.md.\n" {
				t.Fatalf("run (o) = exit %d, stdout %q, stderr %q; want 0 and the answer", code, out, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("LANG=%s: the card has no %q:\n%s", tc.lang, w, stderr)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(stderr, n) {
					t.Errorf("LANG=%s: the card has %q:\n%s", tc.lang, n, stderr)
				}
			}
		})
	}
}
