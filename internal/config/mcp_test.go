package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestMCPRoundTrips: configured servers (stdio with hosts, stdio with the
// whole network, HTTP with a token) render and load back equal.
func TestMCPRoundTrips(t *testing.T) {
	want := Default(Paths{WorkspaceDir: t.TempDir()})
	want.MCP.Servers = []MCPServer{
		{
			Name: "everything", Command: []string{"node", "/opt/mcp/everything/index.js", "stdio"},
			Env: map[string]string{"PATH": "/usr/bin:/bin", "Z_LAST": `q"uote`}, Mounts: []string{"/opt/mcp/everything"},
			Network: MCPNetwork{Hosts: []string{"api.example.com", "10.0.0.2:8443"}}, Secrets: []string{"example-key"}, ReadOnly: []string{"echo", "get-sum"},
			StartTimeout: Duration(5 * time.Second), CallTimeout: Duration(2 * time.Minute),
		},
		{Name: "wide", Command: []string{"/usr/local/bin/wide"}, Network: MCPNetwork{All: true}},
		{Name: "tracker", URL: "https://mcp.tracker.example/mcp", TokenSecret: "tracker-token"},
		{Name: "hosted", URL: "https://mcp.hosted.example/mcp", Auth: "oauth", Scopes: []string{"tools:read", "offline_access"}, ClientID: "homard-123"},
	}
	got, data := renderLoad(t, want)
	if !reflect.DeepEqual(got.MCP, want.MCP) {
		t.Errorf("Load(Render(c)).MCP =\n%+v\nwant\n%+v\nrendered:\n%s", got.MCP, want.MCP, data)
	}
}

// TestMCPExampleIsValid uncomments the rendered example servers and loads
// them: the example a reader copies works.
func TestMCPExampleIsValid(t *testing.T) {
	data, err := Render(Default(Paths{WorkspaceDir: "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, "# [[mcp.servers]]"), strings.Index(doc, "\n# Operator rules")
	if i < 0 || j < i {
		t.Fatalf("no commented-out example server before the example rules in\n%s", doc)
	}
	doc = doc[:i] + strings.ReplaceAll(doc[i:j], "# ", "") + doc[j:]
	c, err := Load(writeConfig(t, doc))
	if err != nil {
		t.Fatalf("Load(uncommented example): %v\n%s", err, doc)
	}
	if len(c.MCP.Servers) != 3 || c.MCP.Servers[0].Name != "everything" || c.MCP.Servers[1].URL == "" || c.MCP.Servers[2].Auth != "oauth" {
		t.Errorf("example servers loaded as %+v; want everything (stdio), tracker (url) and hosted (a login)", c.MCP.Servers)
	}
	if d := Default(Paths{WorkspaceDir: "/ws"}); len(d.MCP.Servers) != 0 {
		t.Errorf("Default has servers %+v; want none", d.MCP.Servers)
	}
}

func TestMCPValidation(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"bad name", `name = "My-Server"
command = ["/bin/srv"]`, `name = "My-Server": want 1 to 32 lowercase letters and digits`},
		{"npx", `name = "a"
command = ["npx", "-y", "@modelcontextprotocol/server-everything"]`, "pin the server: install it and give node and the script"},
		{"npx by path", `name = "a"
command = ["/usr/bin/npx", "srv"]`, "pin the server"},
		{"both", `name = "a"
command = ["/bin/srv"]
url = "https://x.example/mcp"`, "set command (a stdio server) or url (an HTTP server), not both"},
		{"neither", `name = "a"`, "set command (a stdio server's argv) or url"},
		{"relative program", `name = "a"
command = ["bin/srv"]`, "want an absolute, clean program path"},
		{"relative mount", `name = "a"
command = ["/bin/srv"]
mounts = ["cache"]`, `mounts[0] = "cache": want an absolute, clean folder`},
		{"url host", `name = "a"
command = ["/bin/srv"]
network = ["https://api.example.com/"]`, "want a host name such as"},
		{"network false string", `name = "a"
command = ["/bin/srv"]
network = "yes"`, "network: want a list of host names, or true"},
		{"env name", `name = "a"
command = ["/bin/srv"]
env = { "bad name" = "x" }`, `"bad name" is not an environment variable name`},
		{"token on stdio", `name = "a"
command = ["/bin/srv"]
token_secret = "t"`, "a token is only sent to a url server"},
		{"credentials in url", `name = "a"
url = "https://u:p@x.example/mcp"`, "credentials do not belong in the URL"},
		{"token value", `name = "a"
url = "https://x.example/mcp"
token_secret = "sk live 123"`, "want the name of a vault secret"},
		{"url with mounts", `name = "a"
url = "https://x.example/mcp"
mounts = ["/opt"]`, "env, mounts, network and secrets are for a stdio server"},
		{"secret value", `name = "a"
command = ["/bin/srv"]
network = ["api.example.com"]
secrets = ["sk live 123"]`, "secrets[0]: want the name of a vault secret"},
		{"secret without network", `name = "a"
command = ["/bin/srv"]
secrets = ["key"]`, "a secret is added only to requests for the hosts in network"},
		{"secret on url", `name = "a"
url = "https://x.example/mcp"
secrets = ["key"]`, "env, mounts, network and secrets are for a stdio server"},
		{"negative timeout", `name = "a"
command = ["/bin/srv"]
call_timeout = "-1s"`, "call_timeout"},
		{"auth on stdio", `name = "a"
command = ["/bin/srv"]
auth = "oauth"`, "a token is only sent to a url server"},
		{"auth unknown", `name = "a"
url = "https://x.example/mcp"
auth = "basic"`, `auth = "basic": set auth = "oauth" for a server that asks for a login`},
		{"auth and token", `name = "a"
url = "https://x.example/mcp"
auth = "oauth"
token_secret = "t"`, `or token_secret for a fixed token, not both`},
		{"scopes without auth", `name = "a"
url = "https://x.example/mcp"
scopes = ["tools"]`, `scopes and client_id only with it`},
		{"unknown key", `name = "a"
command = ["/bin/srv"]
sandbox = false`, "unknown key mcp.servers.sandbox"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := minimalConfig(t) + "\n[[mcp.servers]]\n" + tt.toml + "\n"
			_, err := Load(writeConfig(t, doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%s) error = %v; want it to contain %q", tt.name, err, tt.want)
			}
		})
	}
	// The twins: what the operator means to write loads.
	for _, ok := range []string{
		"name = \"a\"\ncommand = [\"node\", \"/opt/a/index.js\"]\nnetwork = true",
		"name = \"b1\"\ncommand = [\"/opt/b/srv\"]\nnetwork = [\"api.example.com\"]\nenv = {}",
		"name = \"b2\"\ncommand = [\"/opt/b/srv\"]\nnetwork = [\"api.example.com\"]\nsecrets = [\"example-key\"]",
		"name = \"c\"\nurl = \"http://127.0.0.1:9000/mcp\"",
		"name = \"d\"\nurl = \"https://mcp.example.com/mcp\"\nauth = \"oauth\"\nscopes = [\"tools\"]\nclient_id = \"c-1\"",
	} {
		doc := minimalConfig(t) + "\n[[mcp.servers]]\n" + ok + "\n"
		if _, err := Load(writeConfig(t, doc)); err != nil {
			t.Errorf("Load(%q): %v; want it accepted", ok, err)
		}
	}
	dup := minimalConfig(t) + "\n[[mcp.servers]]\nname = \"a\"\ncommand = [\"/a\"]\n[[mcp.servers]]\nname = \"a\"\ncommand = [\"/b\"]\n"
	if _, err := Load(writeConfig(t, dup)); err == nil || !strings.Contains(err.Error(), "another server has this name") {
		t.Errorf("Load(two servers named a) error = %v; want a duplicate-name error", err)
	}
}

// minimalConfig is a valid config file with one root in a temp folder.
func minimalConfig(t *testing.T) string {
	t.Helper()
	data, err := Render(Default(Paths{WorkspaceDir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
