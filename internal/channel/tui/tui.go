// Package tui is homard's terminal channel: a Bubble Tea program that
// shows a conversation (answers streamed and rendered as light Markdown, one
// line per tool call with its status, approval cards inline) above a
// multi-line input, and runs each message as a turn of a channel.Runtime.
//
// Contract: it talks to homard only through internal/channel. Everything
// the model or a tool wrote is shown as inert text (see clean): no escape
// sequence from them reaches the terminal. Layout is by display width, so
// CJK text (two cells a character) wraps at the terminal's edge; 80×24 is
// the smallest size it is designed for. A turn runs on its own goroutine,
// which ends when the turn ends; cancelling (Ctrl+C or /cancel during a
// turn, or leaving the program) cancels the turn's context, which stops
// the model stream, a running tool and a waiting approval card.
package tui

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
)

// Options configure Run.
type Options struct {
	// Session is the conversation to resume or start; required.
	Session string
	// In and Out are the terminal; nil means the process's.
	In  io.Reader
	Out io.Writer
	// Lang is the language of the chat's labels, hints and notices (and
	// of the turns' system prompt line). The zero value is English.
	Lang lang.Tag
}

// Run shows the chat on the terminal until the owner leaves (/exit, or
// Ctrl+C with no turn running) or ctx ends. It first loads the session's
// history, so a session of another owner is refused before anything is
// drawn. It returns the session the owner was in last (/new changes it),
// or "" when the chat did not start.
func Run(ctx context.Context, rt channel.Runtime, o Options) (string, error) {
	if o.Session == "" {
		return "", errors.New("tui: no session") // lang:en
	}
	history, err := rt.History(ctx, o.Session)
	if err != nil {
		return "", err
	}
	m := newModel(ctx, rt, o.Session, history, lang.For(o.Lang))
	defer m.Close()
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithAltScreen()}
	if o.In != nil {
		opts = append(opts, tea.WithInput(o.In))
	}
	if o.Out != nil {
		opts = append(opts, tea.WithOutput(o.Out))
	}
	_, err = tea.NewProgram(m, opts...).Run()
	m.Close()
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return m.session, err
}

// Model is the chat's Bubble Tea model. Its fields are used only on the
// program's goroutine, except events, life and turns, which the turn
// goroutine shares (a channel, a context, a WaitGroup).
type Model struct {
	rt     channel.Runtime
	info   channel.Info
	life   context.Context // ends when the chat closes; bounds every turn
	close  context.CancelFunc
	events chan tea.Msg    // from the turn goroutine to Update
	turns  *sync.WaitGroup // the running turn goroutine, if any

	session       string
	width, height int
	vp            viewport.Model
	input         textarea.Model
	entries       []*entry
	answer        *entry            // the answer being streamed; nil after a tool line
	tools         map[string]*entry // tool lines of the running turn by call id
	busy          bool
	cancel        context.CancelFunc // cancels the running turn
	cancelled     bool               // the owner cancelled the running turn
	card          *openCard          // the approval waiting for a key
	last          *channel.TurnResult
	spent         spent // the session's turns run in this chat, for /budget
	maxCalls      int   // /budget N: each next turn's tool-call cap; 0 none
	toolsOff      bool  // /tools off: next turns offer no tool
	quitting      bool
	p             lang.Printer // the language of what homard says here
}

// openCard is an approval card waiting for the owner's key.
type openCard struct {
	entry *entry
	reply chan<- channel.Choice // buffered: sending never blocks
}

// New builds the model for session in English, showing history first.
// ctx bounds the model's turns; Close ends them.
func New(ctx context.Context, rt channel.Runtime, session string, history []channel.Message) *Model {
	return newModel(ctx, rt, session, history, lang.Printer{})
}

// newModel is New speaking p's language.
func newModel(ctx context.Context, rt channel.Runtime, session string, history []channel.Message, p lang.Printer) *Model {
	life, cancel := context.WithCancel(ctx)
	in := textarea.New()
	in.Placeholder = p.T("Message homard — Enter sends, Alt+Enter or Ctrl+J adds a line, /help")
	in.ShowLineNumbers = false
	in.Prompt = "› "
	in.CharLimit = 32 * 1024
	in.SetHeight(inputHeight)
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	in.Focus()
	m := &Model{
		rt: rt, info: rt.Info(), life: life, close: cancel,
		events: make(chan tea.Msg), turns: &sync.WaitGroup{},
		session: session, vp: viewport.New(80, 20), input: in,
		tools: map[string]*entry{},
		width: 80, height: 24, p: p,
	}
	m.showHistory(history)
	m.layout()
	return m
}

// Close cancels a running turn and waits for its goroutine to end.
func (m *Model) Close() {
	m.close()
	m.turns.Wait()
}

// Session is the conversation the chat is in.
func (m *Model) Session() string { return m.session }

const inputHeight = 3

// Messages from the turn goroutine.
type (
	textMsg string
	toolMsg channel.ToolEvent
	askMsg  struct {
		card  channel.Card
		reply chan<- channel.Choice
	}
	doneMsg struct {
		res channel.TurnResult
		err error
	}
)

// Init starts listening to the turn goroutine.
func (m *Model) Init() tea.Cmd { return tea.Batch(textarea.Blink, m.listen()) }

// listen waits for the next message of a turn.
func (m *Model) listen() tea.Cmd {
	events, life := m.events, m.life
	return func() tea.Msg {
		select {
		case msg := <-events:
			return msg
		case <-life.Done():
			return nil
		}
	}
}

// Update handles keys, the terminal's size and the turn's progress.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.layout()
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	case textMsg:
		if m.answer == nil {
			m.answer = m.add(&entry{kind: kindAnswer})
		}
		m.answer.text += string(msg)
		m.answer.dirty()
		m.refresh()
		return m, m.listen()
	case toolMsg:
		m.tool(channel.ToolEvent(msg))
		return m, m.listen()
	case askMsg:
		m.ask(msg)
		return m, m.listen()
	case doneMsg:
		m.done(msg)
		return m, m.listen()
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

func (m *Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "ctrl+c":
		if m.busy {
			m.cancelTurn()
			return m, nil
		}
		return m.quit()
	case "pgup":
		m.vp.PageUp()
		return m, nil
	case "pgdown":
		m.vp.PageDown()
		return m, nil
	case "ctrl+home":
		m.vp.GotoTop()
		return m, nil
	case "ctrl+end":
		m.vp.GotoBottom()
		return m, nil
	}
	if m.card != nil {
		m.answerCard(msg.String())
		return m, nil
	}
	if msg.Type == tea.KeyEnter && !msg.Alt {
		return m.submit()
	}
	lines := m.input.LineCount()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	if m.input.LineCount() != lines {
		m.layout() // the input grew or lost a line
	}
	return m, cmd
}

func (m *Model) quit() (tea.Model, tea.Cmd) {
	m.quitting = true
	m.close()
	return m, tea.Quit
}

// submit sends the input as a message, or runs it as a command.
func (m *Model) submit() (tea.Model, tea.Cmd) {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return m, nil
	}
	if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
		m.input.Reset()
		m.layout()
		return m.command(text)
	}
	if m.busy {
		m.note(m.p.T("A turn is running: wait for it, or /cancel it."))
		return m, nil
	}
	if strings.HasPrefix(text, "//") {
		text = text[1:] // "//x" sends "/x"
	}
	m.input.Reset()
	m.add(&entry{kind: kindUser, text: text})
	m.start(text)
	m.layout()
	return m, nil
}

// start runs a turn on a goroutine that reports through m.events.
func (m *Model) start(text string) {
	ctx, cancel := context.WithCancel(m.life)
	m.busy, m.cancel, m.cancelled, m.answer = true, cancel, false, nil
	clear(m.tools)
	events, life := m.events, m.life
	send := func(msg tea.Msg) {
		select {
		case events <- msg:
		case <-life.Done():
		}
	}
	req := channel.TurnRequest{
		Session: m.session,
		Text:    text, MaxCalls: m.maxCalls, NoTools: m.toolsOff, Lang: m.p.Tag().String(),
		OnText: func(s string) { send(textMsg(s)) },
		OnTool: func(ev channel.ToolEvent) { send(toolMsg(ev)) },
		Ask: func(ctx context.Context, c channel.Card) (channel.Choice, error) {
			reply := make(chan channel.Choice, 1)
			send(askMsg{card: c, reply: reply})
			select {
			case ch := <-reply:
				return ch, nil
			case <-ctx.Done():
				return channel.Leave, ctx.Err()
			}
		},
	}
	rt, turns := m.rt, m.turns
	turns.Add(1)
	go func() {
		defer turns.Done()
		defer cancel()
		res, err := rt.Turn(ctx, req)
		send(doneMsg{res: res, err: err})
	}()
}

func (m *Model) cancelTurn() {
	if !m.busy || m.cancelled {
		return
	}
	m.cancelled = true
	m.cancel()
	if m.card != nil {
		m.card.entry.answer = m.p.T("cancelled")
		m.card.entry.dirty()
		m.closeCard()
	}
	m.note(m.p.T("Cancelling…"))
}

// tool adds or updates the line of a tool call.
func (m *Model) tool(ev channel.ToolEvent) {
	e, ok := m.tools[ev.ID]
	// A new proposal with an id seen before in this turn is another call:
	// some endpoints number calls afresh in every response.
	if !ok || ev.ID == "" || (ev.Status == channel.Proposed && e.tool.Status != channel.Proposed) {
		e = m.add(&entry{kind: kindTool})
		m.tools[ev.ID] = e
	}
	e.tool = ev
	e.dirty()
	m.answer = nil // text after a tool call starts a new block
	m.refresh()
}

// ask shows an approval card and hands the keys to it.
func (m *Model) ask(msg askMsg) {
	if m.cancelled {
		msg.reply <- channel.Leave
		return
	}
	e := m.add(&entry{kind: kindCard, card: msg.card})
	m.card = &openCard{entry: e, reply: msg.reply}
	m.answer = nil
	m.input.Blur()
	m.refresh()
	m.vp.GotoBottom()
}

// answerCard handles a key while a card is open: o, s, a, d, or Esc to
// leave the call pending. A card that Allows only once or deny (critical
// or once-only) takes only o, d and Esc: s or a shows a hint and keeps
// the card open.
func (m *Model) answerCard(k string) {
	c := m.card
	var choice channel.Choice
	var said string
	switch k {
	case "o", "O":
		choice, said = channel.Once, lang.N("approved once")
	case "s", "S":
		choice, said = channel.Session, lang.N("approved for this session")
	case "a", "A":
		choice, said = channel.Always, lang.N("approved always (scoped rule)")
	case "d", "D":
		choice, said = channel.Deny, lang.N("denied")
	case "esc":
		choice, said = channel.Leave, lang.N("left pending")
	default:
		return
	}
	if !c.entry.card.Allows(choice) {
		c.entry.hint = m.p.T("This card can only be approved once (o) or denied (d).")
		if c.entry.card.Allows(channel.Session) {
			c.entry.hint = m.p.T("This command runs code: approve it once (o), for this session (s), or deny it (d).")
		}
		c.entry.dirty()
		m.refresh()
		return
	}
	c.reply <- choice
	c.entry.answer = m.p.T(said)
	c.entry.hint = ""
	c.entry.dirty()
	m.closeCard()
}

func (m *Model) closeCard() {
	m.card = nil
	m.input.Focus()
	m.refresh()
}

// done ends the turn: errors, why it stopped, what waits for approval.
func (m *Model) done(msg doneMsg) {
	m.busy, m.cancel, m.answer = false, nil, nil
	if m.card != nil { // the turn ended without an answer to its card
		m.card.entry.answer = m.p.T("not answered")
		m.closeCard()
	}
	switch {
	case msg.err != nil && (m.cancelled || errors.Is(msg.err, context.Canceled)):
		m.note(m.p.T("Cancelled. Nothing of this turn was kept in the conversation; tool calls it made are in the audit log."))
	case msg.err != nil:
		m.add(&entry{kind: kindError, text: m.p.Sprintf("error: %s", msg.err)})
	default:
		res := msg.res
		m.last = &res
		m.spent.add(res.Usage)
		if res.Stopped != "" {
			m.note(m.p.Sprintf("Stopped early: %s", res.Stopped))
		}
		for _, id := range res.Pending {
			m.note(m.p.Sprintf("Waiting for approval %s: homard approval approve %s, then ask again.", id, id))
		}
	}
	m.cancelled = false
	m.refresh()
}

// showHistory lays out a resumed session.
func (m *Model) showHistory(h []channel.Message) {
	for _, msg := range h {
		switch msg.Role {
		case "user":
			m.add(&entry{kind: kindUser, text: msg.Text})
		case "assistant":
			m.add(&entry{kind: kindAnswer, text: msg.Text})
		case "tool":
			m.add(&entry{kind: kindTool, tool: channel.ToolEvent{Name: msg.Tool, Args: msg.Text, Status: msg.Status}})
		}
	}
	if len(h) > 0 {
		m.note(m.p.Sprintf("Resumed session %s.", m.session))
	}
}

func (m *Model) add(e *entry) *entry {
	e.p = m.p
	m.entries = append(m.entries, e)
	return e
}

func (m *Model) note(text string) {
	m.add(&entry{kind: kindNote, text: text})
	m.refresh()
}
