package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/channel/telegram/telegramtest"
)

// pairRun is a running `homard pair telegram --json`: its code, its
// stderr as it comes, its stdin and its end.
type pairRun struct {
	cmd    *exec.Cmd
	code   string
	stdin  io.WriteCloser
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
}

// startPair starts `homard pair telegram --json [extra…]` and reads the
// code from its first line.
func (r *tgRig) startPair(extra ...string) *pairRun {
	r.t.Helper()
	p := &pairRun{cmd: r.cmd(append([]string{"pair", "telegram", "--json"}, extra...)...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		r.t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		line, _ := br.ReadString('\n')
		first <- line
		p.stdout.Write([]byte(line))
		io.Copy(p.stdout, br)
		p.done <- p.cmd.Wait()
	}()
	r.t.Cleanup(func() { p.cmd.Process.Kill() })
	var line string
	select {
	case line = <-first:
	case <-time.After(tgDeadline):
		r.t.Fatalf("homard pair printed nothing within %s; stderr %s", tgDeadline, p.stderr.String())
	}
	var v struct {
		Code      string    `json:"code"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal([]byte(line), &v); err != nil || len(v.Code) < 8 || v.ExpiresAt.IsZero() {
		r.t.Fatalf("homard pair --json first line = %q (%v); want {\"code\",\"expires_at\"}; stderr %s", line, err, p.stderr.String())
	}
	p.code = v.Code
	return p
}

// wait waits for pair to end and returns its exit code.
func (p *pairRun) wait(r *tgRig) int {
	r.t.Helper()
	select {
	case <-p.done:
	case <-time.After(tgDeadline):
		p.cmd.Process.Kill()
		r.t.Fatalf("homard pair did not end; stdout %q stderr %q", p.stdout.String(), p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// exited reports whether pair has ended (without waiting).
func (p *pairRun) exited() bool {
	select {
	case err := <-p.done:
		p.done <- err
		return true
	default:
		return false
	}
}

// pairOwner pairs u as an owner through `homard pair telegram --json
// --yes` and the fake: serve must be running.
func (r *tgRig) pairOwner(u telegramtest.User) {
	r.t.Helper()
	p := r.startPair("--yes")
	r.tg.Say(telegramtest.Message{From: u, Text: "/pair " + p.code})
	if code := p.wait(r); code != 0 {
		r.t.Fatalf("homard pair --yes = exit %d; stdout %q stderr %q", code, p.stdout.String(), p.stderr.String())
	}
	r.waitUntil("the paired account to be told", func() bool { return r.countText(u.ID, "Paired:") == 1 })
}

// TestTelegramPairing: `homard pair telegram` prints a code, a wrong code
// and the code sent in a group pair nobody, the owner's `/pair CODE` in
// the direct chat is shown for confirmation and, confirmed with "y",
// makes the account an owner; a stranger who uses a later code is shown
// too and, declined with "n", is not an owner.
func TestTelegramPairing(t *testing.T) {
	rig := newTgRig(t)
	rig.start()
	if n := rig.channelOwners(); n != 0 {
		t.Fatalf("owners before pairing = %d; want 0", n)
	}
	p := rig.startPair()

	// A wrong code from a stranger: refused, nobody paired, pair waits.
	wrong := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "/pair AAAAAAAAAA"})
	rig.settled(wrong.UpdateID)
	if got := rig.messages(tgStranger.ID, 1); got[0].Text != "That code is not valid." {
		t.Errorf("reply to a wrong code = %q; want \"That code is not valid.\"", got[0].Text)
	}
	// The right code, but in a group: a group is never a pairing place.
	group := telegramtest.Group(-1001111, "somewhere")
	inGroup := rig.tg.Say(telegramtest.Message{From: tgOwner, Chat: group, Text: "/pair " + p.code})
	rig.settled(inGroup.UpdateID)
	if p.exited() {
		t.Fatalf("homard pair ended after a wrong code and a group message; stdout %q stderr %q", p.stdout.String(), p.stderr.String())
	}
	if n := rig.channelOwners(); n != 0 {
		t.Fatalf("owners after a wrong code and a group attempt = %d; want 0", n)
	}

	// The owner's code in the direct chat: pair shows the account, asks,
	// and "y" makes it an owner.
	rig.tg.Say(telegramtest.Message{From: tgOwner, Text: "/pair " + p.code})
	rig.waitUntil("pair to ask for confirmation", func() bool { return strings.Contains(p.stderr.String(), "[y/N]") })
	if !strings.Contains(p.stderr.String(), "account 4242 (Ada)") {
		t.Errorf("pair shows %q; want the account that used the code (4242, Ada)", p.stderr.String())
	}
	if n := rig.channelOwners(); n != 0 {
		t.Fatalf("owners before the confirmation = %d; want 0", n)
	}
	io.WriteString(p.stdin, "y\n")
	if code := p.wait(rig); code != 0 || !strings.Contains(p.stdout.String(), "paired: telegram account 4242 is an owner") {
		t.Fatalf("homard pair = exit %d, stdout %q; want 0 and paired", code, p.stdout.String())
	}
	if n := rig.channelOwners(); n != 1 {
		t.Fatalf("owners after pairing = %d; want 1", n)
	}
	rig.waitUntil("the owner to be told", func() bool { return rig.countText(tgOwner.ID, "Paired:") == 1 })

	// A stranger who gets hold of a new code is shown, and declined.
	p2 := rig.startPair()
	rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "/pair " + p2.code})
	rig.waitUntil("pair to ask about the stranger", func() bool { return strings.Contains(p2.stderr.String(), "[y/N]") })
	if !strings.Contains(p2.stderr.String(), "account 6666 (Mallory)") {
		t.Errorf("pair shows %q; want the stranger's account", p2.stderr.String())
	}
	io.WriteString(p2.stdin, "n\n")
	if code := p2.wait(rig); code != 0 || !strings.Contains(p2.stdout.String(), "not paired") {
		t.Fatalf("declined homard pair = exit %d, stdout %q; want 0 and not paired", code, p2.stdout.String())
	}
	rig.waitUntil("the stranger to be told", func() bool { return rig.countText(tgStranger.ID, "declined") == 1 })
	if n := rig.channelOwners(); n != 1 {
		t.Fatalf("owners after a declined pairing = %d; want still 1", n)
	}
	// Their next message reaches no model.
	before := len(rig.model.Requests())
	hi := rig.tg.Say(telegramtest.Message{From: tgStranger, Text: "hello, am I the owner now?"})
	if state := rig.settled(hi.UpdateID); state != "ignored" {
		t.Errorf("the declined stranger's message is %s; want ignored", state)
	}
	if n := len(rig.model.Requests()); n != before {
		t.Errorf("the declined stranger's message made %d model requests; want none", n-before)
	}
	if n := len(rig.model.RequestsWith("am I the owner")); n != 0 {
		t.Errorf("%d model requests hold the stranger's text", n)
	}
}
