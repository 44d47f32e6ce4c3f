package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/llm/llmtest"
)

// docCommand is what running one documented command must give.
type docCommand struct {
	stdin string // what the owner types or pipes in
	code  int    // the exit status
	out   string // a substring of stdout
}

// channelsDocCommands are the commands of docs/CHANNELS.md's sh blocks,
// each with what it must give. A command in the doc without an entry, or
// an entry no longer in the doc, fails the test: the table and the doc
// change together.
var channelsDocCommands = map[string]docCommand{
	"homard secret set telegram --channel telegram": {stdin: telegramtest.DefaultToken + "\n", out: "stored telegram for the telegram channel only"},
	// No owner is paired yet, so doctor fails; the bot answered getMe.
	"homard doctor":       {code: exitFailure, out: "bot @homard_test_bot (7000000001) answers; no owner paired: run `homard pair telegram`"},
	"homard channel list": {out: "telegram"},
	"homard channel allow telegram -1009876543210":      {out: "-1009876543210"},
	"homard secret set discord --channel discord":       {stdin: "discord-token-0123456789\n", out: "stored discord for the discord channel only"},
	"homard secret set feishu --channel feishu":         {stdin: "feishu-app-secret-0123456789\n", out: "stored feishu for the feishu channel only"},
	"homard secret set feishu-encrypt --channel feishu": {stdin: "feishu-encrypt-key-0123456789\n", out: "stored feishu-encrypt for the feishu channel only"},
}

// docBlock is one fenced block of a Markdown file.
type docBlock struct {
	lang string
	line int // the line of its opening fence, from 1
	text string
}

// fencedBlocks returns the fenced blocks of md, indented ones (in a list
// item) included, with their indentation removed.
func fencedBlocks(md string) []docBlock {
	var out []docBlock
	var cur *docBlock
	indent := ""
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil {
			if lang, ok := strings.CutPrefix(trimmed, "```"); ok {
				cur = &docBlock{lang: strings.TrimSpace(lang), line: n}
				indent = line[:len(line)-len(trimmed)]
			}
			continue
		}
		if trimmed == "```" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.text += strings.TrimPrefix(line, indent) + "\n"
	}
	return out
}

// shellWords splits one documented command line into words: spaces
// separate them, single or double quotes group them, and " #" starts a
// comment. Anything a plain command line does not need (pipes,
// redirections, variables, several commands) is refused, so every sh block
// stays a list of commands this test can run as typed.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for i, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case r == '#' && !in:
			return words, nil
		case strings.ContainsRune("|<>$;&`\\", r):
			return nil, fmt.Errorf("column %d: %q is not a plain command line", i+1, r)
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote")
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// TestChannelsDocCommands runs docs/CHANNELS.md as an owner follows it:
// every homard command of its sh blocks, in order, against a home whose
// model, Telegram Bot API, Discord and Feishu are loopback fakes; every
// toml block loads as part of a config, and the Telegram steps' block is
// the config the later commands run with. So the documented steps cannot
// drift from what homard accepts.
func TestChannelsDocCommands(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "..", "docs", "CHANNELS.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-DOCKEY0123456789")
	model := llmtest.NewServer(llmtest.Reply{Chunks: []string{`{"data":[{"id":"gpt-4o-mini"}]}`}})
	defer model.Close()
	tg := telegramtest.New(telegramtest.Options{})
	defer tg.Close()
	// Discord and Feishu are never reached by these commands; their
	// api_base points here so nothing could leave the machine.
	elsewhere := httptest.NewServer(http.NotFoundHandler())
	defer elsewhere.Close()
	bases := map[string]string{"telegram": tg.URL, "discord": elsewhere.URL, "feishu": elsewhere.URL}

	home := t.TempDir()
	useTestStore(t, home)
	homard := func(stdin string, args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"--home", home}, args...), strings.NewReader(stdin), &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, stderr := homard("", "init", "--base-url", model.URL+"/v1"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}
	cfgFile := filepath.Join(home, "config.toml")
	base, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	// withBase points every channel table of block at its fake, in place
	// of the api_base the doc shows.
	table := regexp.MustCompile(`(?m)^\[channels\.(\w+)\]\n`)
	docBase := regexp.MustCompile(`(?m)^api_base = .*\n`)
	withBase := func(block string) string {
		block = docBase.ReplaceAllString(block, "")
		return table.ReplaceAllStringFunc(block, func(h string) string {
			return h + fmt.Sprintf("api_base = %q\n", bases[table.FindStringSubmatch(h)[1]])
		})
	}

	ran := map[string]bool{}
	sh, toml := 0, 0
	for _, b := range fencedBlocks(string(md)) {
		switch b.lang {
		case "toml":
			toml++
			p := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(p, append(bytes.Clone(base), withBase(b.text)...), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := config.Load(p); err != nil {
				t.Errorf("docs/CHANNELS.md:%d: the toml block does not load as part of a config:\n%v", b.line, err)
			}
			if strings.Contains(b.text, "groups = [-") {
				// The Telegram steps' block: the config from here on.
				if err := os.WriteFile(cfgFile, append(bytes.Clone(base), withBase(b.text)...), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		case "sh":
			sh++
			for i, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
				where := fmt.Sprintf("docs/CHANNELS.md:%d", b.line+1+i)
				words, err := shellWords(line)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				if len(words) == 0 {
					continue
				}
				if words[0] != "homard" {
					t.Errorf("%s: %q: the sh blocks hold homard commands only", where, line)
					continue
				}
				cmdline := strings.Join(words, " ")
				want, ok := channelsDocCommands[cmdline]
				if !ok {
					t.Errorf("%s: %q has no entry in channelsDocCommands: add what it must give", where, cmdline)
					continue
				}
				ran[cmdline] = true
				code, out, stderr := homard(want.stdin, words[1:]...)
				if code != want.code || !strings.Contains(out, want.out) {
					t.Errorf("%s: %s = exit %d; want %d and stdout holding %q\nstdout:\n%s\nstderr:\n%s", where, cmdline, code, want.code, want.out, out, stderr)
				}
			}
		}
	}
	if sh == 0 || toml == 0 {
		t.Fatalf("docs/CHANNELS.md: %d sh and %d toml blocks; the parser found none", sh, toml)
	}
	for c := range channelsDocCommands {
		if !ran[c] {
			t.Errorf("channelsDocCommands has %q, which docs/CHANNELS.md no longer shows", c)
		}
	}
	if calls := tg.Calls("getMe"); len(calls) == 0 {
		t.Error("the fake Bot API was never asked getMe: doctor did not check the token")
	}
}

// TestShellWords: the documented command lines split as a shell would,
// and what the doc test cannot run as typed is refused.
func TestShellWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // words joined by |, or "error"
	}{
		{"homard channel allow telegram -100123", "homard|channel|allow|telegram|-100123"},
		{`homard secret set x --format '{}'  # a comment`, "homard|secret|set|x|--format|{}"},
		{`homard run "two words"`, "homard|run|two words"},
		{"printf %s x | homard secret set a", "error"},
		{"homard secret set a < key.txt", "error"},
		{`homard run "open`, "error"},
	} {
		got, err := shellWords(tt.in)
		s := strings.Join(got, "|")
		if err != nil {
			s = "error"
		}
		if s != tt.want {
			t.Errorf("shellWords(%q) = %q (%v); want %q", tt.in, s, err, tt.want)
		}
	}
}
