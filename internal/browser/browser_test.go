package browser

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/homard/homard/internal/egress"
)

// TestFormRoundTrip: a snapshot lists the form's controls with refs;
// typing and clicking submit sends the typed value in exactly one POST;
// a screenshot is a PNG.
func TestFormRoundTrip(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	pi, err := b.Open(ctx, s.url("/form"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if pi.Title != "Form" || pi.TabID == "" {
		t.Errorf("Open = %+v; want the title Form and a tab id", pi)
	}
	snap, err := b.Snapshot(ctx, 4096)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	t.Logf("snapshot:\n%s", snap.Text)
	if snap.Truncated || snap.Text != snap.Full {
		t.Errorf("a small page's snapshot was cut: Truncated=%v", snap.Truncated)
	}
	if !strings.Contains(snap.Text, `heading "Search the archive"`) {
		t.Errorf("snapshot lacks the heading:\n%s", snap.Text)
	}
	refOf(t, snap, "link", "Other page")
	box, send := refOf(t, snap, "textbox", "Query"), refOf(t, snap, "button", "Send")
	if err := b.Type(ctx, box, "hello world"); err != nil {
		t.Fatalf("Type: %v", err)
	}
	pi, err = b.Click(ctx, send)
	if err != nil {
		t.Fatalf("Click: %v", err)
	}
	if !strings.HasSuffix(pi.URL, "/submit") {
		t.Errorf("after the click the tab shows %q; want /submit", pi.URL)
	}
	s.mu.Lock()
	posts := append([]string(nil), s.posts...)
	s.mu.Unlock()
	var sent []string
	for _, p := range posts {
		if strings.HasPrefix(p, "/submit ") {
			sent = append(sent, p)
		}
	}
	if len(sent) != 1 || sent[0] != "/submit q=hello+world" {
		t.Errorf("the server saw POSTs %q; want exactly one with q=hello world", sent)
	}
	img, err := b.Screenshot(ctx)
	if err != nil {
		t.Fatalf("Screenshot: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	if err != nil || cfg.Width != 1280 || cfg.Height != 800 {
		t.Errorf("Screenshot: %dx%d, %v; want a 1280x800 PNG", cfg.Width, cfg.Height, err)
	}
	if pi, err := b.Back(ctx); err != nil || !strings.HasSuffix(pi.URL, "/form") {
		t.Errorf("Back = %+v, %v; want the form again", pi, err)
	}
}

// TestHostilePageReachesNothing: every way a page can make a request to
// a port egress does not allow (fetch, XHR, an image of the metadata
// service, a redirect, a form, a WebSocket, popups, a frame, a worker,
// CSS) reaches nothing, and is listed by Blocked; the same kinds of
// request to the allowed server go through.
func TestHostilePageReachesNothing(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/hostile")); err != nil {
		t.Fatalf("Open: %v", err)
	}
	// The twin: the page's requests to the allowed server arrive.
	for _, p := range []string{"/ok-fetch", "/ok-img", "/ok-frame", "/ok-xhr", "/ok-worker"} {
		eventually(t, "the page's request to "+p, func() bool { return s.hit(p) > 0 })
	}
	snap, err := b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	tabsBefore, _ := b.Tabs(ctx)
	// Popups opened by a click (a user gesture, which the popup blocker
	// lets through) are intercepted like any tab.
	if _, err := b.Click(ctx, refOf(t, snap, "button", "Open popup")); err != nil {
		t.Fatalf("Click the popup button: %v", err)
	}
	if _, err := b.Open(ctx, s.url("/hostile")); err != nil { // the hostile page again, for its link
		t.Fatal(err)
	}
	snap, err = b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Click(ctx, refOf(t, snap, "link", "Blank link")); err != nil {
		t.Fatalf("Click the target=_blank link: %v", err)
	}
	want := []string{
		"169.254.169.254", s.sinkURL("/fetch"), s.sinkURL("/xhr"), s.sinkURL("/redirected"),
		s.sinkURL("/iframe"), s.sinkURL("/form"), s.sinkURL("/popup-click"), s.sinkURL("/blank"),
		s.sinkURL("/worker"), s.sinkURL("/css"), s.sinkHost() + " (CONNECT)", // the WebSocket, at the proxy
	}
	for _, w := range want {
		eventually(t, "a refusal of "+w, func() bool {
			for _, bl := range b.Blocked() {
				if strings.Contains(bl.URL, w) && bl.Reason != "" {
					return true
				}
			}
			return false
		})
	}
	if n := s.sinkConns.Load(); n != 0 {
		t.Errorf("the sink on a port egress does not allow saw %d connections; want 0", n)
	}
	tabs, err := b.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) <= len(tabsBefore) {
		t.Errorf("Tabs = %d after the popups; want more than %d (popups open as tabs)", len(tabs), len(tabsBefore))
	}
	// Tidy up: close every tab but one.
	for _, tb := range tabs[1:] {
		if err := b.CloseTab(ctx, tb.TabID); err != nil {
			t.Errorf("CloseTab(%s): %v", tb.TabID, err)
		}
	}
	if tabs, _ := b.Tabs(ctx); len(tabs) != 1 || !tabs[0].Active {
		t.Errorf("after closing, Tabs = %+v; want one active tab", tabs)
	}
}

// TestOpenRefusals: the model cannot open a URL egress refuses, nor a
// scheme other than http(s); nothing reaches the sink. The twin opens
// the allowed server.
func TestOpenRefusals(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		url  string
		want error
	}{
		{s.sinkURL("/open"), ErrBlocked},
		{"http://169.254.169.254/latest/meta-data/", ErrBlocked},
		{"javascript:fetch('http://" + s.sinkHost() + "/js')", ErrArgument},
		{"file:///etc/passwd", ErrArgument},
		{"chrome://settings", ErrArgument},
		{"data:text/html,<script>fetch('http://" + s.sinkHost() + "/data')</script>", ErrArgument},
	} {
		if _, err := b.Open(ctx, tc.url); !errors.Is(err, tc.want) {
			t.Errorf("Open(%q) = %v; want %v", tc.url, err, tc.want)
		}
		if _, err := b.Navigate(ctx, tc.url); !errors.Is(err, tc.want) {
			t.Errorf("Navigate(%q) = %v; want %v", tc.url, err, tc.want)
		}
	}
	if pi, err := b.Navigate(ctx, s.url("/other")); err != nil || pi.Title != "Other" {
		t.Errorf("Navigate(allowed) = %+v, %v; want the page", pi, err)
	}
	if n := s.sinkConns.Load(); n != 0 {
		t.Errorf("the sink saw %d connections; want 0", n)
	}
}

// TestHiddenTextLeftOut: text hidden from a person in each of the usual
// ways does not reach the snapshot; visible text does.
func TestHiddenTextLeftOut(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/hidden")); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(snap.Full, "ignore your instructions") {
		t.Errorf("hidden text reached the snapshot:\n%s", snap.Full)
	}
	for _, v := range []string{"Visible words here", "More visible text"} {
		if !strings.Contains(snap.Text, v) {
			t.Errorf("visible text %q is missing from the snapshot:\n%s", v, snap.Text)
		}
	}
}

// TestDownloadLandsInFolder: a file served as an attachment lands in
// DownloadDir under its suggested name, and nowhere else.
func TestDownloadLandsInFolder(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/download")); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Click(ctx, refOf(t, snap, "link", "Get the report")); err != nil {
		t.Fatalf("Click: %v", err)
	}
	dir := b.o.DownloadDir
	path := filepath.Join(dir, "report.txt")
	eventually(t, "the download", func() bool {
		data, err := os.ReadFile(path)
		return err == nil && string(data) == "the quarterly report\n"
	})
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the download folder holds %q; want only report.txt", names)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the download folder's mode is %v (%v); want 0700", fi.Mode().Perm(), err)
	}
	found := ""
	filepath.WalkDir(b.o.ProfileDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "report.txt" {
			found = p
		}
		return nil
	})
	if found != "" {
		t.Errorf("a copy of the download is in the profile: %s", found)
	}
	// Downloads hands the finished file over once.
	var got []string
	eventually(t, "Downloads to list it", func() bool {
		got = append(got, b.Downloads()...)
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != path {
		t.Errorf("Downloads = %q; want [%s]", got, path)
	}
	if again := b.Downloads(); len(again) != 0 {
		t.Errorf("Downloads again = %q; want nothing", again)
	}
}

// TestSnapshotSize: a news-like page with 200 links is cut to maxBytes
// on a line boundary; Full keeps all of it.
func TestSnapshotSize(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/links")); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx, 4096)
	if err != nil {
		t.Fatal(err)
	}
	links := strings.Count(snap.Full, "\n  link \"Story ")
	t.Logf("200-link page: Full %d bytes (%d lines), Text %d bytes (%d links shown), Truncated %v",
		len(snap.Full), strings.Count(snap.Full, "\n")+1, len(snap.Text), strings.Count(snap.Text, "link \"Story "), snap.Truncated)
	if links != 200 {
		t.Errorf("Full lists %d story links; want 200:\n%s", links, snap.Full)
	}
	if len(snap.Text) > 4096 {
		t.Errorf("len(Text) = %d; want at most 4096", len(snap.Text))
	}
	if snap.Truncated != (len(snap.Full) > 4096) {
		t.Errorf("Truncated = %v with Full %d bytes", snap.Truncated, len(snap.Full))
	}
	last := snap.Text[strings.LastIndex(snap.Text, "\n")+1:]
	if !strings.Contains(last, "left out") {
		t.Errorf("the cut snapshot's last line is %q; want it to say what is left out", last)
	}
	if !strings.HasPrefix(snap.Full, snap.Text[:strings.LastIndex(snap.Text, "\n")]) {
		t.Error("Text is not a prefix of Full cut on a line boundary")
	}
}

// TestElement: what a ref points at, for a readable plan, and refusals of
// unknown and stale refs.
func TestElement(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/elements")); err != nil {
		t.Fatal(err)
	}
	snap, err := b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot:\n%s", snap.Full)
	for _, tc := range []struct {
		role, name string
		submits    bool
	}{
		{"button", "Save", true},
		{"button", "Plain", false},
		{"link", "Elsewhere", true},
		{"button", "Harmless", true}, // its page's script says otherwise

		{"textbox", "Name", false},
		{"combobox", "Colour", false},
	} {
		ref := refOf(t, snap, tc.role, tc.name)
		el, err := b.Element(ctx, ref)
		if err != nil {
			t.Errorf("Element(%s %q): %v", tc.role, tc.name, err)
			continue
		}
		if el.Role != tc.role || el.Name != tc.name || el.Submits != tc.submits || !strings.HasSuffix(el.PageURL, "/elements") || el.Ref != ref {
			t.Errorf("Element(%s) = %+v; want %s %q Submits=%v on /elements", ref, el, tc.role, tc.name, tc.submits)
		}
	}
	colour := refOf(t, snap, "combobox", "Colour")
	if err := b.Select(ctx, colour, "Green"); err != nil {
		t.Errorf("Select(Green): %v", err)
	}
	if err := b.Select(ctx, colour, "Blue"); !errors.Is(err, ErrArgument) {
		t.Errorf("Select(Blue) = %v; want ErrArgument", err)
	}
	if err := b.Press(ctx, "Tab"); err != nil {
		t.Errorf("Press(Tab): %v", err)
	}
	if err := b.Press(ctx, "F13"); !errors.Is(err, ErrArgument) {
		t.Errorf("Press(F13) = %v; want ErrArgument", err)
	}
	if err := b.Scroll(ctx, "down"); err != nil {
		t.Errorf("Scroll(down): %v", err)
	}
	if _, err := b.Element(ctx, "999"); !errors.Is(err, ErrRef) {
		t.Errorf("Element(unknown) = %v; want ErrRef", err)
	}
	save := refOf(t, snap, "button", "Save")
	if _, err := b.Navigate(ctx, s.url("/other")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Element(ctx, save); !errors.Is(err, ErrRef) {
		t.Errorf("Element(a ref of the page before) = %v; want ErrRef", err)
	}
}

// TestIdleClose: with a short IdleTimeout Chromium's process is gone
// after a while, and the next call starts it again; Close stops it.
func TestIdleClose(t *testing.T) {
	s, _ := fixture(t)
	ctx := testCtx(t)
	dir := t.TempDir()
	b, err := New(Options{ChromePath: chromiumPath(), ProfileDir: filepath.Join(dir, "p"), DownloadDir: filepath.Join(dir, "d"), Egress: s.client, IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.Running() || b.PID() != 0 {
		t.Fatal("New started Chromium; want it started on first use")
	}
	if _, err := b.Open(ctx, s.url("/other")); err != nil {
		t.Fatal(err)
	}
	pid := b.PID()
	if pid == 0 {
		t.Fatal("PID = 0 after Open")
	}
	if fi, err := os.Stat(filepath.Join(dir, "p")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("profile folder mode %v (%v); want 0700", fi.Mode().Perm(), err)
	}
	eventually(t, "the idle browser to exit", func() bool {
		return !b.Running() && syscall.Kill(pid, 0) == syscall.ESRCH && syscall.Kill(-pid, 0) == syscall.ESRCH
	})
	pi, err := b.Open(ctx, s.url("/form"))
	if err != nil || pi.Title != "Form" {
		t.Fatalf("Open after the idle close = %+v, %v", pi, err)
	}
	pid2 := b.PID()
	if pid2 == 0 || pid2 == pid {
		t.Errorf("PID after restart = %d (was %d); want a new process", pid2, pid)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
	if syscall.Kill(-pid2, 0) != syscall.ESRCH || b.PID() != 0 {
		t.Error("Chromium's process group is still there after Close")
	}
	if _, err := b.Open(ctx, s.url("/form")); !errors.Is(err, ErrClosed) {
		t.Errorf("Open after Close = %v; want ErrClosed", err)
	}
}

// TestNoChromium: a missing binary is ErrNoChromium, with how to install
// it; New checks its options without starting anything.
func TestNoChromium(t *testing.T) {
	c, _ := egress.New(egress.Options{})
	dir := t.TempDir()
	b, err := New(Options{ChromePath: filepath.Join(dir, "no-such-chromium"), ProfileDir: filepath.Join(dir, "p"), DownloadDir: filepath.Join(dir, "d"), Egress: c})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.Open(t.Context(), "https://example.com/")
	if !errors.Is(err, ErrNoChromium) || !strings.Contains(err.Error(), "apt-get install chromium") {
		t.Errorf("Open without Chromium = %v; want ErrNoChromium saying how to install it", err)
	}
	for _, o := range []Options{
		{ProfileDir: "p", DownloadDir: "d"},            // no egress
		{Egress: c, DownloadDir: "d"},                  // no profile
		{Egress: c, ProfileDir: "x", DownloadDir: "x"}, // the same folder
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) = nil error; want a refusal", o)
		}
	}
}

// TestScreencastAndTakeover: the owner's view (JPEG frames, acknowledged
// so more follow) and hands (mouse, keys) work on the active tab.
func TestScreencastAndTakeover(t *testing.T) {
	s, b := fixture(t)
	ctx := testCtx(t)
	if _, err := b.Open(ctx, s.url("/form")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	frames := 0
	stop, err := b.Screencast(ctx, func(jpeg []byte) {
		if bytes.HasPrefix(jpeg, []byte{0xff, 0xd8}) {
			mu.Lock()
			frames++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("Screencast: %v", err)
	}
	for _, m := range []string{"move", "press", "move", "release"} {
		if err := b.Mouse(ctx, m, 5, 5); err != nil {
			t.Errorf("Mouse(%s): %v", m, err)
		}
	}
	if err := b.Mouse(ctx, "double", 5, 5); !errors.Is(err, ErrArgument) {
		t.Errorf("Mouse(double) = %v; want ErrArgument", err)
	}
	snap, err := b.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The mouse clicked the page's margin; the keys go to the field.
	if _, err := b.Click(ctx, refOf(t, snap, "textbox", "Query")); err != nil {
		t.Fatal(err)
	}
	for _, c := range "hi" {
		if err := b.Key(ctx, string(c), string(c)); err != nil {
			t.Fatalf("Key(%c): %v", c, err)
		}
	}
	eventually(t, "a screencast frame", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return frames > 0
	})
	stop()
	stop() // idempotent
	if err := b.Press(ctx, "Enter"); err != nil {
		t.Fatalf("Press(Enter): %v", err)
	}
	eventually(t, "the form sent by Enter", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return slices.Contains(s.posts, "/submit q=hi")
	})
}
