package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/homard/homard/internal/mcp/mcptest"
)

// TestMCPLoginCommand: `homard mcp login NAME` as a person types it over
// SSH: it prints the authorization address, the browser's redirect
// cannot come back, so the person pastes the address it ended on; the
// login lands in the vault (list says logged in, with its expiry, and
// never a token), `mcp test` then lists the server's tools, and logout
// removes it (list says how to log in again). A server without auth =
// "oauth" is refused a login.
func TestMCPLoginCommand(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.json")
	if err := mcptest.WriteSpec(spec, mcptest.Default()); err != nil {
		t.Fatal(err)
	}
	rig := mcptest.NewOAuthRig(spec, true)
	t.Cleanup(rig.Close)
	home := filepath.Join(t.TempDir(), "home")
	useTestStore(t, home)
	homardIn(t, home, "", "init")
	cfgPath := filepath.Join(home, "config.toml")
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	i := strings.Index(cfg, "[egress]")
	cfg = cfg[:i] + strings.Replace(cfg[i:], "allow = []", fmt.Sprintf("allow = [%q, %q]", rig.Origin, rig.Auth.URL), 1)
	cfg += fmt.Sprintf("\n[[mcp.servers]]\nname = \"web\"\nurl = %q\nauth = \"oauth\"\n\n[[mcp.servers]]\nname = \"plain\"\nurl = %q\n", rig.URL, rig.URL)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}

	if list := homardIn(t, home, "", "mcp", "list"); !strings.Contains(list, "not logged in: homard mcp login web") {
		t.Errorf("mcp list before login:\n%s\nwant it to say how to log in", list)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"--home", home, "mcp", "login", "plain"}, strings.NewReader(""), &out, &errb); code == 0 || !strings.Contains(errb.String(), `auth = "oauth"`) {
		t.Errorf("mcp login plain: exit %d, stderr %q; want a refusal naming auth = \"oauth\"", code, errb.String())
	}

	// A hostile authorization server's address is printed inert; a paste
	// that is neither an address nor a code ends the login.
	rig.Auth.Meta = func(m map[string]any) { m["authorization_endpoint"] = rig.Auth.URL + "/authorize?x=\u202eevil\u200b" }
	out.Reset()
	errb.Reset()
	if code := run([]string{"--home", home, "mcp", "login", "web"}, strings.NewReader("not a code\n"), &out, &errb); code == 0 ||
		!strings.Contains(out.String(), "Open this address") || strings.ContainsAny(out.String()+errb.String(), "\u202e\u200b") {
		t.Errorf("mcp login with a hostile address and a bad paste: exit %d\nstdout %q\nstderr %q; want the address inert and a refusal", code, out.String(), errb.String())
	}
	rig.Auth.Meta = nil

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan int, 1)
	var loginErr bytes.Buffer
	go func() {
		code := run([]string{"--home", home, "mcp", "login", "web"}, stdinR, stdoutW, &loginErr)
		stdoutW.Close()
		done <- code
	}()
	var printed strings.Builder
	sc := bufio.NewScanner(stdoutR)
	pasted := false
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if authURL, ok := strings.CutPrefix(line, "  "); ok && !pasted && strings.HasPrefix(authURL, rig.Auth.URL+"/authorize?") {
			// The browser, on another machine: it ends on the redirect
			// address, which does not load there.
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.Get(authURL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			fmt.Fprintln(stdinW, resp.Header.Get("Location"))
			pasted = true
		}
	}
	stdinW.Close()
	if code := <-done; code != 0 || !pasted {
		t.Fatalf("mcp login web: exit %d, pasted %v\nstdout:\n%s\nstderr: %s", code, pasted, printed.String(), loginErr.String())
	}
	if !strings.Contains(printed.String(), "logged in to web: its tokens are in the vault as mcp-login-web") {
		t.Errorf("mcp login output:\n%s\nwant it to say where the login is kept", printed.String())
	}

	list := homardIn(t, home, "", "mcp", "list")
	if !strings.Contains(list, "(logged in; token expires ") {
		t.Errorf("mcp list after login:\n%s\nwant logged in with the expiry", list)
	}
	raw := homardIn(t, home, "", "mcp", "list", "--json")
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &items); err != nil || len(items) != 2 {
		t.Fatalf("mcp list --json = %s (%v); want two servers", raw, err)
	}
	web := decodeStrict[mcpJSON](t, "mcp list --json", items[0])
	if web.Login == nil || !web.Login.LoggedIn || web.Login.Expires == nil || !web.Login.Refreshable {
		t.Errorf("mcp list --json login = %+v; want logged in, refreshable, with an expiry", web.Login)
	}
	if test := homardIn(t, home, "", "mcp", "test", "web"); !strings.Contains(test, "4 tools") {
		t.Errorf("mcp test web after login:\n%s\nwant its 4 tools", test)
	}
	all := printed.String() + list + raw
	for _, tok := range rig.Auth.Tokens() {
		if strings.Contains(all, tok) {
			t.Errorf("a token was printed: %s", tok)
		}
	}

	if out := homardIn(t, home, "", "mcp", "logout", "web"); !strings.Contains(out, "logged out of web") {
		t.Errorf("mcp logout web: %q", out)
	}
	if list := homardIn(t, home, "", "mcp", "list"); !strings.Contains(list, "not logged in: homard mcp login web") {
		t.Errorf("mcp list after logout:\n%s\nwant it to say how to log in", list)
	}
}
