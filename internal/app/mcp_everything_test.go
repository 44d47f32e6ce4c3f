package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/homard/homard/internal/arbiter"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/store/storetest"
)

// The MCP reference server these tests run against: the npm package
// @modelcontextprotocol/server-everything, pinned (with every dependency)
// by .ci/mcp-everything/package-lock.json and installed there by .ci/run
// (npm ci --prefix .ci/mcp-everything). It is started as node and its
// script, never npx.
const (
	everythingVersion = "2026.8.31"
	everythingDir     = "../../.ci/mcp-everything"
	everythingScript  = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	// everythingLong is a 32-letter server name: with it, the pinned
	// server's longest tool maps to a name over mcp.MaxToolName.
	everythingLong = "everythingeverythingeverything32"
)

// everythingInstalled returns the install folder and the server's script.
// Without node or the install the test skips; under CI it fails.
func everythingInstalled(t *testing.T) (dir, script string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing("node is not installed (apt-get install nodejs npm): %v", err)
	}
	dir, err := filepath.Abs(everythingDir)
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, everythingScript)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(script), "..", "package.json"))
	if err != nil {
		missing("the MCP reference server is not installed: run npm ci --prefix .ci/mcp-everything (%v)", err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(b, &pkg); err != nil || pkg.Version != everythingVersion {
		t.Fatalf("installed server-everything is version %q (%v); want %s: run npm ci --prefix .ci/mcp-everything", pkg.Version, err, everythingVersion)
	}
	return dir, script
}

// newEverythingHome is a home in smart mode with the reference server
// configured three times, each in the service sandbox with its install
// folder mounted read-only: "everything" (get-env and get-tiny-image
// declared read-only, one variable in env), "slow" (a 2s call_timeout)
// and everythingLong (never trusted). All three are trusted but the last;
// the returned runtime has them started.
func newEverythingHome(t *testing.T) (config.Paths, *Runtime) {
	t.Helper()
	sandboxOK(t)
	dir, script := everythingInstalled(t)
	paths, err := config.ResolvePaths(t.TempDir(), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Init(context.Background(), paths, config.InitOptions{StoreURL: storetest.URL(t), Mode: "smart"}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(paths.ConfigFile, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	server := func(name, extra string) {
		fmt.Fprintf(f, "\n[[mcp.servers]]\nname = %q\ncommand = [\"node\", %q, \"stdio\"]\nmounts = [%q]\n%s\n", name, script, dir, extra)
	}
	server("everything", `env = { EVERYTHING_MARK = "configured-value" }`+"\n"+`read_only = ["get-env", "get-tiny-image", "gzip-file-as-resource"]`)
	server("slow", `read_only = ["trigger-long-running-operation"]`+"\n"+`call_timeout = "2s"`)
	server(everythingLong, "")
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := Open(context.Background(), paths, Options{SkipMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"everything", "slow"} {
		rep, err := r.Extensions.InspectMCP(context.Background(), name)
		if err != nil {
			r.Close()
			t.Fatalf("InspectMCP(%s): %v", name, err)
		}
		if err := r.Extensions.TrustMCP(context.Background(), rep); err != nil {
			r.Close()
			t.Fatalf("TrustMCP(%s): %v", name, err)
		}
	}
	r.Close()

	r, err = Open(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return paths, r
}

// TestMCPEverything runs homard against the pinned MCP reference server,
// each step through the arbiter: its tools are listed and mapped (the
// ones too long once mapped refused, by name), a plain tool waits for
// approval in smart mode, its environment holds none of homard's secrets,
// its image becomes an artifact, it cannot fetch a URL without network,
// and a call over call_timeout fails with a message that says so. TestMCPRugPull (the in-process fake) covers a
// changed list; TestMCPServerIsConfined covers reading homard's home, as
// the reference server has no tool that reads files.
func TestMCPEverything(t *testing.T) {
	const envSecret, vaultSecret = "env-s3cret-9f1c2e", "vault-s3cret-4b7d0a"
	t.Setenv("HOMARD_EVERYTHING_SECRET", envSecret)
	_, r := newEverythingHome(t)
	if err := r.Owner.SecretSet(Secret{Name: "everything-api", Hosts: []string{"api.example.com"}}, []byte(vaultSecret)); err != nil {
		t.Fatal(err)
	}

	t.Run("listed", func(t *testing.T) { everythingListed(t, r) })

	t.Run("echo waits for approval", func(t *testing.T) {
		out := mcpCall(t, r, "", "mcp__everything__echo", `{"message":"hi"}`)
		if out.Decision != arbiter.Pending {
			t.Fatalf("echo in smart mode: %s (%s); want pending", out.Decision, out.Reason)
		}
		if _, err := r.Owner.Approve(context.Background(), out.ApprovalID, "once"); err != nil {
			t.Fatal(err)
		}
		out = mcpCall(t, r, "", "mcp__everything__echo", `{"message":"hi"}`)
		if out.Decision != arbiter.Ran || out.Result == nil || out.Result.Text != "Echo: hi" || !out.Result.Untrusted {
			t.Fatalf("echo after approval: %s %+v; want ran with untrusted \"Echo: hi\"", out.Decision, out.Result)
		}
	})

	t.Run("get-env holds only its env", func(t *testing.T) {
		out := mcpCall(t, r, "", "mcp__everything__get_env", `{}`)
		if out.Decision != arbiter.Ran || out.Result == nil || out.Result.IsError {
			t.Fatalf("get-env (read_only) in smart mode: %s %+v; want it to run unasked", out.Decision, out.Result)
		}
		for _, secret := range []string{envSecret, vaultSecret, "HOMARD_EVERYTHING_SECRET", r.Paths.DataDir} {
			if strings.Contains(out.Result.Text, secret) {
				t.Errorf("the server's environment holds %q:\n%s", secret, out.Result.Text)
			}
		}
		var env map[string]string
		if err := json.Unmarshal([]byte(out.Result.Text), &env); err != nil {
			t.Fatalf("get-env result is not its JSON environment: %v\n%s", err, out.Result.Text)
		}
		if env["EVERYTHING_MARK"] != "configured-value" {
			t.Errorf("the server's environment = %v; want the configured EVERYTHING_MARK", env)
		}
		for k, v := range env {
			// The sandbox adds HOME, and PWD naming the same folder.
			if k != "EVERYTHING_MARK" && k != "HOME" && (k != "PWD" || v != env["HOME"]) {
				t.Errorf("the server's environment holds %s=%q; want only its configured env, HOME and PWD", k, v)
			}
		}
	})

	t.Run("image becomes an artifact", func(t *testing.T) {
		out := mcpCall(t, r, "s-img", "mcp__everything__get_tiny_image", `{}`)
		if out.Decision != arbiter.Ran || out.Result == nil {
			t.Fatalf("get-tiny-image: %s (%s); want ran", out.Decision, out.Reason)
		}
		m := regexp.MustCompile(`(?m)^\[homard: the result held image \(image/png, \d+ bytes\); stored as artifact (art_[0-9a-f]+)\]$`).FindStringSubmatch(out.Result.Text)
		if m == nil || strings.Contains(out.Result.Text, "iVBORw0KGgo") {
			t.Fatalf("get-tiny-image result = %q; want a line naming the artifact and no base64", out.Result.Text)
		}
		a, err := r.Store.Artifact(context.Background(), m[1])
		if err != nil {
			t.Fatal(err)
		}
		data, _ := strings.CutPrefix(a.Text, "data:image/png;base64,")
		png, err := base64.StdEncoding.DecodeString(data)
		if err != nil || !strings.HasPrefix(string(png), "\x89PNG\r\n") || !a.Untrusted || a.Session != "s-img" {
			t.Errorf("artifact %s = session %s untrusted %t, %d bytes (%v); want a PNG, untrusted, in the caller's session", a.ID, a.Session, a.Untrusted, len(png), err)
		}
	})

	t.Run("no network", func(t *testing.T) {
		// The server fetches a URL given to gzip-file-as-resource; it has
		// no network (network is not set), so an https URL fails inside
		// the server.
		out := mcpCall(t, r, "", "mcp__everything__gzip_file_as_resource", `{"name":"x.gz","data":"https://example.com/","outputType":"resource"}`)
		if out.Result == nil || !out.Result.IsError || !strings.Contains(out.Result.Text, "fetch failed") {
			t.Errorf("gzip of an https URL without network: %s %+v; want the server's \"fetch failed\"", out.Decision, out.Result)
		}
		// The twin: a data: URL needs no network and is gzipped.
		out = mcpCall(t, r, "", "mcp__everything__gzip_file_as_resource", `{"name":"x.gz","data":"data:text/plain;base64,aGVsbG8=","outputType":"resource"}`)
		if out.Decision != arbiter.Ran || out.Result == nil || out.Result.IsError || !strings.Contains(out.Result.Text, "(application/gzip, ") {
			t.Errorf("gzip of a data: URL: %s %+v; want the gzipped resource stored as an artifact", out.Decision, out.Result)
		}
	})

	t.Run("call_timeout", func(t *testing.T) {
		out := mcpCall(t, r, "", "mcp__slow__trigger_long_running_operation", `{"duration":120,"steps":1}`)
		want := "mcp server slow did not answer trigger-long-running-operation within 2s"
		if out.Result == nil || !out.Result.IsError || !strings.Contains(out.Result.Text, want) {
			t.Fatalf("a call over call_timeout: %s %+v; want an error saying %q", out.Decision, out.Result, want)
		}
		// The twin: a call within the limit still runs on the same server.
		out = mcpCall(t, r, "", "mcp__slow__trigger_long_running_operation", `{"duration":0,"steps":1}`)
		if out.Decision != arbiter.Ran || out.Result == nil || out.Result.IsError || !strings.Contains(out.Result.Text, "Long running operation completed") {
			t.Fatalf("a short call after a timeout: %s %+v; want it to complete", out.Decision, out.Result)
		}
	})
}

// everythingListed: the trusted server offers the pinned version's tools
// under mcp__everything__, '-' mapped to '_'; the never-trusted long-named
// one offers nothing and refuses, by name, the tool too long once mapped.
func everythingListed(t *testing.T, r *Runtime) {
	want := []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference",
		"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource",
		"simulate-research-query", "toggle-simulated-logging", "toggle-subscriber-updates",
		"trigger-long-running-operation",
	}
	reps := r.Extensions.MCPServers()
	if len(reps) != 3 {
		t.Fatalf("MCPServers = %+v; want three servers", reps)
	}
	ev, long := reps[0], reps[2]
	if ev.Name != "everything" || ev.Status != MCPTrusted {
		t.Fatalf("everything = %s %s (%s); want trusted", ev.Name, ev.Status, ev.Error)
	}
	var names []string
	for _, tl := range ev.Tools {
		names = append(names, tl.Name)
		mapped := "mcp__everything__" + strings.ReplaceAll(tl.Name, "-", "_")
		if tl.Mapped != mapped || tl.Refused != "" {
			t.Errorf("tool %s is mapped to %q (refused %q); want %s, offered", tl.Name, tl.Mapped, tl.Refused, mapped)
		}
		if _, ok := r.Registry.Lookup(mapped); !ok {
			t.Errorf("%s is not registered", mapped)
		}
		if ro := tl.Name == "get-env" || tl.Name == "get-tiny-image" || tl.Name == "gzip-file-as-resource"; tl.ReadOnly != ro {
			t.Errorf("tool %s read_only = %t; want %t (the config's read_only, never the server's annotations)", tl.Name, tl.ReadOnly, ro)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("server-everything %s lists %v; want %v", everythingVersion, names, want)
	}

	if long.Name != everythingLong || long.Status != MCPNew {
		t.Fatalf("%s = %s %s (%s); want new (never trusted)", everythingLong, long.Name, long.Status, long.Error)
	}
	var refused []string
	for _, tl := range long.Tools {
		if tl.Refused != "" {
			refused = append(refused, tl.Name+": "+tl.Refused)
		}
		if _, ok := r.Registry.Lookup(tl.Mapped); ok {
			t.Errorf("%s is registered; a never-trusted server offers nothing", tl.Mapped)
		}
	}
	wantRefused := "trigger-long-running-operation: its name is 69 characters once mapped (mcp__" + everythingLong + "__trigger_long_running_operation)"
	if len(refused) != 1 || !strings.HasPrefix(refused[0], wantRefused) {
		t.Errorf("%s refuses %q; want only %q", everythingLong, refused, wantRefused)
	}
}
