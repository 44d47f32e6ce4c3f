package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/homard/homard/internal/channel"
	"github.com/homard/homard/internal/lang"
	"github.com/homard/homard/internal/termtext"
)

// interactive reports whether the owner is at a terminal: stdin, to read
// answers, and stderr, where cards are shown.
func (c *cli) interactive() bool {
	in, ok := c.stdin.(*os.File)
	if !ok || !term.IsTerminal(int(in.Fd())) {
		return false
	}
	return c.stderrTerminal()
}

// stderrTerminal reports whether stderr, where cards are shown, is a
// terminal (and so may be styled).
func (c *cli) stderrTerminal() bool {
	errf, ok := c.stderr.(*os.File)
	return ok && term.IsTerminal(int(errf.Fd()))
}

// Terminal attributes of the inline card. Every text printed before it
// that homard did not write (the model's answer, tool output) went through
// termtext, so it holds no escape sequence and cannot have hidden,
// recoloured or moved anything; the card still starts with an SGR reset,
// then an empty line. Its header and its prompt are the only lines drawn in
// reverse video, which the model's text can never be: a card the model
// imitates in its answer is plain text above the real one.
const (
	sgrReset = "\x1b[0m"
	sgrCard  = "\x1b[0;1;7m" // bold, reverse video
)

// askInline shows an approval card on stderr and reads the owner's answer
// from stdin: o(nce), s(ession), a(lways), d(eny), or an empty line (or end
// of input) to leave the call pending. A card that only takes once or deny
// (card.Allows: critical, or once-only) offers only those, and refuses
// session or always in place. An unknown answer is asked again.
func (c *cli) askInline(ctx context.Context, card channel.Card) (channel.Choice, error) {
	if c.beforeAsk != nil {
		c.beforeAsk()
	}
	reset, style := "", ""
	if c.stderrTerminal() {
		reset, style = sgrReset, sgrCard
	}
	// Every field but the hash prefix is text the model chose or quotes
	// it: the one printer, one line each (a plan line by line, tabs kept).
	c.say.Fprintf(c.stderr, "%s\n%s── approval needed: %s (risk %s) ─ %s%s\n", reset, style,
		termtext.Line(card.Tool), termtext.Line(card.Risk), termtext.Line(card.ApprovalID), reset)
	for _, line := range strings.Split(strings.TrimRight(card.Plan, "\n"), "\n") {
		fmt.Fprintf(c.stderr, "   %s\n", termtext.Visible(line))
	}
	if card.Preview != "" {
		c.say.Fprintln(c.stderr, "   ─ what it does ─")
		c.printPreview(c.stderr, card.Preview, previewOpts{indent: "   ", colour: style != "", omitted: card.PreviewOmitted, id: card.ApprovalID})
	}
	c.say.Fprintf(c.stderr, "   plan hash %s\n", termtext.Line(shortHash(card.PlanHash)))
	if card.Reason != "" {
		c.say.Fprintf(c.stderr, "   why asked: %s\n", termtext.Line(card.Reason))
	}
	if card.Allows(channel.Session) && card.Covers != "" && !card.CoversShown() {
		which := c.say.T("session or always")
		if !card.Allows(channel.Always) {
			which = c.say.T("session")
		}
		c.say.Fprintf(c.stderr, "   %s would also let run unasked: %s\n", which, termtext.Line(card.Covers))
	}
	prompt := c.say.T("approve [o]nce, this [s]ession, [a]lways (scoped rule), [d]eny, or Enter to leave it pending:")
	switch {
	case card.Critical():
		prompt = c.say.T("critical: approve [o]nce or [d]eny, or Enter to leave it pending:")
	case !card.Allows(channel.Session):
		prompt = c.say.T("approve [o]nce or [d]eny, or Enter to leave it pending:")
	case !card.Allows(channel.Always):
		prompt = c.say.T("approve [o]nce, this [s]ession, [d]eny, or Enter to leave it pending:")
	}
	for {
		fmt.Fprintf(c.stderr, "%s   %s%s%s ", reset, style, prompt, reset)
		line, err := c.readAnswer(ctx)
		if ctx.Err() != nil {
			fmt.Fprintln(c.stderr)
			return channel.Leave, ctx.Err()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return channel.Leave, c.say.Errorf("read approval answer: %w", err)
		}
		ans := strings.ToLower(strings.TrimSpace(line))
		if errors.Is(err, io.EOF) && ans == "" {
			fmt.Fprintln(c.stderr)
			return channel.Leave, nil
		}
		choice, ok := channel.ParseChoice(ans)
		switch {
		case ok && card.Allows(choice):
			return choice, nil
		case ok && card.Allows(channel.Session):
			fmt.Fprintf(c.stderr, "   %s\n", c.say.T(noAlwaysRefusal))
		case ok:
			fmt.Fprintf(c.stderr, "   %s\n", c.say.T(onceOnlyRefusal))
		default:
			c.say.Fprintf(c.stderr, "   %q is not an answer here.\n", ans)
		}
		if errors.Is(err, io.EOF) {
			return channel.Leave, nil
		}
	}
}

// onceOnlyRefusal answers a session or always answer to a card that takes
// only once or deny; the card is asked again.
var onceOnlyRefusal = lang.N("this card can only be approved once or denied: answer o or d (or Enter to leave it pending)")

// noAlwaysRefusal answers an always answer to a card that takes at most
// session (a command that runs code); the card is asked again.
var noAlwaysRefusal = lang.N("this command runs code: it can be approved once or for this session, not always: answer o, s or d (or Enter to leave it pending)")

// shortHash is the prefix of a plan hash people compare by eye.
func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return h
}

// stdinLine is one line read from stdin (what the owner typed; ParseChoice
// reads it as an answer).
type stdinLine struct {
	text string
	err  error
}

// readAnswer reads one line from stdin, or returns when ctx ends (Ctrl+C):
// a terminal read cannot be interrupted, so one goroutine reads lines for
// the life of the command and hands them over one at a time.
func (c *cli) readAnswer(ctx context.Context) (string, error) {
	if c.answers == nil {
		c.answers = make(chan stdinLine)
		go func() {
			r := bufio.NewReader(c.stdin)
			for {
				line, err := r.ReadString('\n')
				c.answers <- stdinLine{line, err}
				if err != nil {
					close(c.answers)
					return
				}
			}
		}()
	}
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l, ok := <-c.answers:
		if !ok {
			return "", io.EOF
		}
		return l.text, l.err
	}
}
