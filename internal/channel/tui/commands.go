package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
)

// command runs a slash command.
func (m *Model) command(text string) (tea.Model, tea.Cmd) {
	name, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(name) {
	case "/help", "/?":
		m.note(m.p.T(helpText))
	case "/exit", "/quit":
		return m.quit()
	case "/cancel":
		if !m.busy {
			m.note(m.p.T("No turn is running."))
		} else {
			m.cancelTurn()
		}
	case "/new", "/clear":
		if m.busy {
			m.note(m.p.T("A turn is running: /cancel it first."))
			break
		}
		id := fmt.Sprintf("chat-%d", time.Now().Unix())
		if id == m.session {
			id += "-2"
		}
		m.session = id
		m.entries, m.last, m.spent = nil, nil, spent{}
		m.note(m.p.Sprintf("New session %s. Resume it later with: homard chat --session %s", id, id))
	case "/budget":
		m.note(m.setBudget(arg))
	case "/tools":
		switch strings.ToLower(arg) {
		case "off":
			m.toolsOff = true
			m.note(m.p.T("Tools off: the next turns offer the model no tool, and any call it makes anyway is refused (limit.tools-off). /tools on turns them back on."))
		case "on":
			m.toolsOff = false
			m.note(m.p.T("Tools on."))
		case "":
			if m.toolsOff {
				m.note(m.p.T("Tools are off (/tools on)."))
			} else {
				m.note(m.p.T("Tools are on (/tools off for text from somewhere you do not trust)."))
			}
		default:
			m.note(m.p.T("Usage: /tools off, /tools on"))
		}
	default:
		m.note(m.p.Sprintf("Unknown command %s. /help lists the commands; start a message with // to send a leading /.", clean(name)))
	}
	m.refresh()
	return m, nil
}

// setBudget handles /budget: with no argument it reports; with N it caps
// each next turn's tool calls at N (never above agent.max_calls); with 0
// or "off" it lifts the cap.
func (m *Model) setBudget(arg string) string {
	if arg == "" {
		out := m.budget()
		if m.maxCalls > 0 {
			out += m.p.Sprintf("\nNext turns: at most %d tool calls (/budget off lifts it).", m.maxCalls)
		}
		return out
	}
	n, err := strconv.Atoi(arg)
	switch {
	case strings.EqualFold(arg, "off") || err == nil && n == 0:
		m.maxCalls = 0
		return m.p.T("Tool-call cap lifted: turns use agent.max_calls.")
	case err != nil || n < 0 || n > 1000:
		return m.p.T("Usage: /budget (report), /budget N (at most N tool calls a turn), /budget off")
	}
	m.maxCalls = n
	return m.p.Sprintf("Next turns: at most %d tool calls each (never more than agent.max_calls).", n)
}

func (m *Model) budget() string {
	if m.last == nil {
		return m.p.T("No turn has finished yet in this session.")
	}
	r := m.last
	s := m.spent
	p := m.p
	out := p.Sprintf("Last turn: %d of %d tool calls, %d of %d budget units; tokens: %d in (%d cached), %d out.\n",
		r.Calls, r.MaxCalls, r.Units, r.MaxUnits, r.Usage.Input, r.Usage.Cached, r.Usage.Output) +
		p.Sprintf("This session, %s in this chat: %d tokens in, %d out; prompt cache: %d tokens read (%d%% of the input), %d written.",
			plural(p, s.turns, lang.N("1 turn"), lang.N("%d turns")), s.Input, s.Output, s.Cached, s.hitPercent(), s.CacheWrite)
	if c := r.Capture; c.Calls > 0 {
		out += p.Sprintf("\nMemory capture in this session so far: %s covering %d turns; tokens: %d in (%d cached), %d out.",
			plural(p, c.Calls, lang.N("1 call"), lang.N("%d calls")), c.Turns, c.Usage.Input, c.Usage.Cached, c.Usage.Output)
	}
	return out
}

// spent adds up the turns of the session run in this chat: a resumed
// session's earlier turns are not counted.
type spent struct {
	turns int
	channel.Usage
}

func (s *spent) add(u channel.Usage) {
	s.turns++
	s.Input += u.Input
	s.Output += u.Output
	s.Cached += u.Cached
	s.CacheWrite += u.CacheWrite
}

// hitPercent is the share of input tokens read from the provider's
// prompt cache, rounded down.
func (s spent) hitPercent() int {
	if s.Input <= 0 {
		return 0
	}
	return s.Cached * 100 / s.Input
}

// plural is one (a catalog key such as "1 turn") or many (one with %d)
// for n, in p's language.
func plural(p lang.Printer, n int, one, many string) string {
	if n == 1 {
		return p.T(one)
	}
	return p.Sprintf(many, n)
}

// helpText is /help (a catalog key).
var helpText = lang.N(`Keys
  Enter             send the message
  Alt+Enter, Ctrl+J new line in the message
  PgUp, PgDn        scroll the conversation (Ctrl+Home, Ctrl+End: top, bottom)
  Ctrl+C            cancel the running turn; with none running, leave
Approval cards
  o once · s this session · a always (a scoped, expiring rule) · d deny
  Esc leaves the call pending (homard approval approve ID later)
  a critical plan takes only o or d
Commands
  /help    this help
  /new     start a fresh session (the old one stays; --session ID resumes it)
  /clear   the same: a fresh session and a clear screen
  /cancel  stop the running turn: the model stream and a running tool
  /budget  the last turn's tool calls and units of their maxima, and tokens;
           the session's tokens, prompt-cache hits and memory capture calls
  /budget N  at most N tool calls in each next turn (/budget off lifts it)
  /tools off no tool offered in the next turns, for text you do not trust
           (/tools on)
  /exit    leave; a running turn is cancelled (Ctrl+C leaves when none runs)
A message starting with // sends one leading /.`)
