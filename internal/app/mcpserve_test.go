package app

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/homard/homard/internal/approval"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/store"
)

// pipeLauncher connects an MCP client to serve, running in this process:
// the client's writes are serve's reads and the other way round.
type pipeLauncher struct {
	serve func(in io.ReadCloser, out io.WriteCloser)
}

type pipeRW struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeRW) Close() error {
	for _, c := range p.closers {
		c.Close()
	}
	return nil
}

func (l pipeLauncher) Start(context.Context, []string, []string) (io.ReadWriteCloser, func() error, error) {
	cr, sw := io.Pipe() // serve writes, the client reads
	sr, cw := io.Pipe() // the client writes, serve reads
	go l.serve(sr, sw)
	rw := pipeRW{Reader: cr, Writer: cw, closers: []io.Closer{cr, cw}}
	return rw, func() error { return rw.Close() }, nil
}

// mcpClient connects an MCP client (homard's own client library) to
// r.MCPServe and pins what it lists.
func mcpClient(t *testing.T, r *Runtime) (*mcp.Server, mcp.Listing) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	l := pipeLauncher{serve: func(in io.ReadCloser, out io.WriteCloser) {
		defer close(done)
		if err := r.Extensions.MCPServe(ctx, in, out, "editor"); err != nil && ctx.Err() == nil {
			t.Errorf("MCPServe: %v", err)
		}
	}}
	s, err := mcp.Connect(ctx, mcp.ServerConfig{Name: "homard", Command: []string{"homard", "mcp", "serve"}}, l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	listing, err := s.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.Pin(listing.Fingerprint)
	return s, listing
}

// TestMCPServeIsGuarded: an MCP client sees homard's tools but memory and
// none that answers approvals; a read runs and comes back as untrusted
// data; a write waits for the owner — even with the owner in yolo, since
// a paired client is decided as in smart at most — and cannot be approved
// for more than once; approved once by the owner elsewhere, it runs.
func TestMCPServeIsGuarded(t *testing.T) {
	r := newTestRuntime(t, "yolo")
	r.Config.Gateway.ApprovalWait = 0 // a pending call answers at once
	writeWorkspaceFile(t, r, "notes.txt", "the kettle is blue\n")
	s, listing := mcpClient(t, r)
	var names []string
	for _, tl := range listing.Offered() {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "read_file") || !slices.Contains(names, "write_file") {
		t.Fatalf("offered %q; want the file tools", names)
	}
	for _, n := range names {
		if n == "remember" || n == "recall" || n == "forget" || strings.Contains(n, "approv") {
			t.Errorf("offered %s to an MCP client", n)
		}
	}
	ctx := context.Background()
	res, err := s.Call(ctx, "read_file", []byte(`{"path":"notes.txt"}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "the kettle is blue") || !strings.Contains(res.Text, "BEGIN_UNTRUSTED") {
		t.Fatalf("read_file = %+v, %v; want the content, wrapped as untrusted", res, err)
	}
	res, err = s.Call(ctx, "write_file", []byte(`{"path":"out.txt","content":"hi\n"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text, "decision: pending") {
		t.Fatalf("write_file in yolo = %+v, %v; want pending (a paired client is decided as in smart)", res, err)
	}
	if _, err := os.Stat(filepath.Join(r.Config.Workspace.Roots[0].Path, "out.txt")); err == nil {
		t.Fatal("out.txt was written before the owner approved")
	}
	list, err := r.Approvals.List(ctx, approval.Pending)
	if err != nil || len(list) != 1 || list[0].Session != "mcp-editor" {
		t.Fatalf("pending approvals = %+v, %v; want the write, in session mcp-editor", list, err)
	}
	if _, err := r.Owner.Approve(ctx, list[0].ID, "session"); !errors.Is(err, approval.ErrScopeNotAllowed) {
		t.Fatalf("approve a paired call for the session: %v; want ErrScopeNotAllowed", err)
	}
	if _, err := r.Owner.Approve(ctx, list[0].ID, "once"); err != nil {
		t.Fatal(err)
	}
	res, err = s.Call(ctx, "write_file", []byte(`{"path":"out.txt","content":"hi\n"}`))
	if err != nil || res.IsError || !strings.Contains(res.Text, "decision: ran") {
		t.Fatalf("write_file after the owner's approval = %+v, %v; want ran", res, err)
	}
	if got, _ := readWorkspaceFile(r, "out.txt"); got != "hi\n" {
		t.Errorf("out.txt = %q; want written once approved", got)
	}
}

// TestMCPServeCardReachesTheOwnersChat: a paired client's pending call
// puts its card, with only "Approve once" and "Deny", in the paired
// owner's Telegram chat; the call answers pending when nobody answers.
func TestMCPServeCardReachesTheOwnersChat(t *testing.T) {
	r := newTestRuntime(t, "smart")
	r.Config.Gateway.ApprovalWait = 0
	r.Config.Channels.Of("telegram").Enabled = true
	r.Config.Channels.Of("telegram").TokenSecret = "tg"
	err := r.Store.Write(context.Background(), func(tx *store.Tx) error {
		return tx.AddChatOwner(store.ChatOwner{Platform: "telegram", UserID: "42", Name: "me", ChatID: "4242", PairedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mcpClient(t, r)
	res, err := s.Call(context.Background(), "write_file", []byte(`{"path":"out.txt","content":"hi\n"}`))
	if err != nil || !strings.Contains(res.Text, "decision: pending") {
		t.Fatalf("write_file = %+v, %v; want pending", res, err)
	}
	rows, err := r.Store.OutboxUnsent(context.Background(), "telegram")
	if err != nil || len(rows) != 1 || rows[0].ChatID != "4242" || !strings.Contains(rows[0].Text, "write_file") {
		t.Fatalf("outbox = %+v, %v; want the card in the owner's chat", rows, err)
	}
	if !strings.Contains(rows[0].Buttons, `:o"`) || !strings.Contains(rows[0].Buttons, `:d"`) || strings.Contains(rows[0].Buttons, `:s"`) || strings.Contains(rows[0].Buttons, `:a"`) {
		t.Errorf("card buttons = %s; want only once and deny", rows[0].Buttons)
	}
}
