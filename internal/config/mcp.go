package config

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// MCP configures the Model Context Protocol servers whose tools homard
// offers (docs/CONFIG.md, docs/ARCHITECTURE.md "MCP servers"). A server
// offers nothing until the owner trusts its tool list (`homard mcp trust`).
type MCP struct {
	// Servers are the [[mcp.servers]] tables. Missing or empty means none.
	Servers []MCPServer `toml:"servers"`
}

// MCPServer is one [[mcp.servers]] table: a stdio server (Command) or a
// streamable-HTTP one (URL), exactly one of the two.
type MCPServer struct {
	// Name names the server in its tools' names (mcp__NAME__tool) and in
	// `homard mcp`: 1 to 32 lowercase letters and digits, unique.
	// Required.
	Name string `toml:"name"`
	// Command is a stdio server's argv: an absolute program path or a
	// program name, then its arguments. "npx" is refused: the server is
	// installed and pinned, then started with node and its script.
	Command []string `toml:"command"`
	// Env is the server's whole environment (nothing else is inherited).
	// Missing or empty means none.
	Env map[string]string `toml:"env"`
	// Mounts are absolute folders the server may read (its own files, a
	// cache), shown to it read-only. Missing or empty means none.
	Mounts []string `toml:"mounts"`
	// Network is the hosts the server may reach through homard's egress
	// proxy, or the boolean true for the unfiltered host network (an
	// explicit opt-in doctor flags). Missing, [] or false means none.
	Network MCPNetwork `toml:"network"`
	// Secrets names vault secrets homard's egress proxy adds to the
	// server's plain http:// requests for the network hosts each is bound
	// to (sent on over https); the server never receives a value. Each
	// must be bound to one of Network's hosts. Missing or empty means
	// none; stdio servers only.
	Secrets []string `toml:"secrets"`
	// ReadOnly lists tools (their names on the server) the operator
	// declares read-only: they run unasked in smart mode. A server's own
	// annotations never count. Missing or empty means none.
	ReadOnly []string `toml:"read_only"`
	// URL is a streamable-HTTP server's endpoint (http or https, no
	// credentials in it).
	URL string `toml:"url"`
	// TokenSecret names the vault secret sent as a bearer token to URL
	// (released only to URL's host). Empty means no token; URL servers only.
	TokenSecret string `toml:"token_secret"`
	// Auth is "oauth" for a url server that asks for a login (the MCP
	// authorization spec): `homard mcp login NAME` stores its tokens in the
	// vault, bound to URL's host, and homard refreshes them. Empty means
	// none; exclusive with TokenSecret.
	Auth string `toml:"auth"`
	// Scopes replace the scopes the server asks for at login. Missing or
	// empty keeps the server's; auth = "oauth" only.
	Scopes []string `toml:"scopes"`
	// ClientID is a client registered beforehand with the authorization
	// server. Empty means homard registers itself (dynamic client
	// registration), which the server must then offer; auth = "oauth" only.
	ClientID string `toml:"client_id"`
	// StartTimeout bounds starting the server, its handshake and its first
	// tool listing. Missing or "0s" means 10s.
	StartTimeout Duration `toml:"start_timeout"`
	// CallTimeout bounds one tool call. Missing or "0s" means 60s.
	CallTimeout Duration `toml:"call_timeout"`
}

// MCPNetwork is a server's network access: a list of hosts, or All (the
// TOML boolean true). The zero value is no network.
type MCPNetwork struct {
	Hosts []string
	All   bool
}

// Any reports whether the server has any network access.
func (n MCPNetwork) Any() bool { return n.All || len(n.Hosts) > 0 }

// UnmarshalTOML accepts an array of host names or a boolean.
func (n *MCPNetwork) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case bool:
		*n = MCPNetwork{All: v}
	case []any:
		hosts := make([]string, 0, len(v))
		for _, h := range v {
			s, ok := h.(string)
			if !ok {
				return fmt.Errorf("network: want host names such as \"api.example.com\", or true; got %v", h)
			}
			hosts = append(hosts, s)
		}
		*n = MCPNetwork{Hosts: hosts}
	default:
		return fmt.Errorf("network: want a list of host names, or true for the unfiltered network; got %v", v)
	}
	return nil
}

// render writes n as TOML.
func (n MCPNetwork) render() string {
	if n.All {
		return "true"
	}
	return quoteList(n.Hosts)
}

// validMCPName repeats mcp.ValidName (config imports no homard package):
// 1 to 32 lowercase ASCII letters and digits.
func validMCPName(name string) bool {
	if name == "" || len(name) > 32 {
		return false
	}
	return !strings.ContainsFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') })
}

// hostRE-like check for network hosts: a DNS name or an IP literal, with an
// optional port, no scheme or path.
func validHost(h string) bool {
	if h == "" || strings.ContainsAny(h, "/@ \t") || strings.ContainsFunc(h, unicode.IsControl) {
		return false
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.Hostname() != ""
}

func validateMCP(m *MCP, ps *problems) {
	seen := map[string]bool{}
	for i := range m.Servers {
		s := &m.Servers[i]
		key := fmt.Sprintf("mcp.servers[%d]", i)
		if !validMCPName(s.Name) {
			ps.add("%s.name = %q: want 1 to 32 lowercase letters and digits (it goes into tool names as mcp__NAME__tool)", key, s.Name)
		} else {
			if seen[s.Name] {
				ps.add("%s.name = %q: another server has this name", key, s.Name)
			}
			seen[s.Name] = true
			key = "mcp server " + s.Name
		}
		switch {
		case len(s.Command) > 0 && s.URL != "":
			ps.add("%s: set command (a stdio server) or url (an HTTP server), not both", key)
		case len(s.Command) == 0 && s.URL == "":
			ps.add("%s: set command (a stdio server's argv) or url (a streamable-HTTP server)", key)
		case len(s.Command) > 0:
			validateMCPCommand(key, s, ps)
		default:
			validateMCPURL(key, s, ps)
		}
		for k := range s.Env {
			if !envNameRE().MatchString(k) {
				ps.add("%s.env: %q is not an environment variable name (A-Z, 0-9 and _)", key, k)
			}
		}
		for j, d := range s.Mounts {
			if d == "" || !filepath.IsAbs(d) || filepath.Clean(d) != d {
				ps.add("%s.mounts[%d] = %q: want an absolute, clean folder such as \"/opt/mcp/cache\"", key, j, d)
			}
		}
		for j, h := range s.Network.Hosts {
			if !validHost(h) {
				ps.add("%s.network[%d] = %q: want a host name such as \"api.example.com\" (a port may follow; no scheme or path)", key, j, h)
			}
		}
		for j, name := range s.Secrets {
			if !secretNameRE().MatchString(name) {
				ps.add("%s.secrets[%d]: want the name of a vault secret (a-z, 0-9, _ and -), not its value", key, j)
			}
		}
		if len(s.Secrets) > 0 && len(s.Network.Hosts) == 0 {
			ps.add("%s.secrets: a secret is added only to requests for the hosts in network; list them (network = [\"api.example.com\"])", key)
		}
		for j, t := range s.ReadOnly {
			if t == "" || strings.ContainsFunc(t, unicode.IsControl) {
				ps.add("%s.read_only[%d] = %q: want a tool name as the server lists it (`homard mcp test %s` shows them)", key, j, t, s.Name)
			}
		}
		if s.StartTimeout < 0 {
			ps.add("%s.start_timeout = %q: want a positive duration such as \"10s\" (\"0s\" means 10s)", key, s.StartTimeout)
		}
		if s.CallTimeout < 0 {
			ps.add("%s.call_timeout = %q: want a positive duration such as \"60s\" (\"0s\" means 60s)", key, s.CallTimeout)
		}
	}
}

func validateMCPCommand(key string, s *MCPServer, ps *problems) {
	prog := s.Command[0]
	switch base := path.Base(prog); {
	case prog == "" || strings.ContainsFunc(prog, unicode.IsControl):
		ps.add("%s.command[0] = %q: want an absolute program path or a program name", key, prog)
	case base == "npx" || base == "npx.cmd" || base == "bunx" || base == "pnpx":
		ps.add("%s.command: %s fetches and runs whatever the registry serves today: pin the server: install it and give node and the script (command = [\"node\", \"/opt/mcp/server/dist/index.js\"])", key, base)
	case strings.Contains(prog, "/") && (!filepath.IsAbs(prog) || filepath.Clean(prog) != prog):
		ps.add("%s.command[0] = %q: want an absolute, clean program path or a program name found in env's PATH", key, prog)
	}
	if s.TokenSecret != "" || s.Auth != "" || len(s.Scopes) > 0 || s.ClientID != "" {
		ps.add("%s: token_secret, auth, scopes and client_id: a token is only sent to a url server; give a stdio server what it needs in env", key)
	}
}

func validateMCPURL(key string, s *MCPServer, ps *problems) {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		ps.add("%s.url: want an absolute http or https URL such as \"https://mcp.example.com/mcp\"", key)
	case u.User != nil:
		ps.add("%s.url = %q: credentials do not belong in the URL; store the token with `homard secret set NAME --host %s` and name it in token_secret", key, u.Redacted(), u.Hostname())
	case u.Fragment != "":
		ps.add("%s.url = %q: want a URL without a fragment", key, s.URL)
	}
	if s.TokenSecret != "" && !secretNameRE().MatchString(s.TokenSecret) {
		ps.add("%s.token_secret: want the name of a vault secret (a-z, 0-9, _ and -), not the token itself", key)
	}
	if s.Auth != "" && s.Auth != "oauth" || s.Auth != "" && s.TokenSecret != "" || s.Auth == "" && (len(s.Scopes) > 0 || s.ClientID != "") {
		ps.add("%s: auth = %q: set auth = \"oauth\" for a server that asks for a login (homard mcp login %s; scopes and client_id only with it), or token_secret for a fixed token, not both", key, s.Auth, s.Name)
	}
	if len(s.Env) > 0 || len(s.Mounts) > 0 || s.Network.Any() || len(s.Secrets) > 0 {
		ps.add("%s: env, mounts, network and secrets are for a stdio server (command); an HTTP server runs elsewhere (its token is token_secret)", key)
	}
}

// renderMCP writes the commented example server, then each configured one.
func renderMCP(w func(string, ...any), m *MCP) {
	w("%s", exampleMCP)
	for _, s := range m.Servers {
		w("\n[[mcp.servers]]\nname = %s\n", quote(s.Name))
		optionalList(w, "command", s.Command)
		if len(s.Env) > 0 {
			keys := make([]string, 0, len(s.Env))
			for k := range s.Env {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([]string, len(keys))
			for i, k := range keys {
				parts[i] = k + " = " + quote(s.Env[k])
			}
			w("env = { %s }\n", strings.Join(parts, ", "))
		}
		optionalList(w, "mounts", s.Mounts)
		if s.Network.Any() {
			w("network = %s\n", s.Network.render())
		}
		optionalList(w, "secrets", s.Secrets)
		optionalList(w, "read_only", s.ReadOnly)
		optionalKey(w, "url", s.URL)
		optionalKey(w, "token_secret", s.TokenSecret)
		optionalKey(w, "auth", s.Auth)
		optionalList(w, "scopes", s.Scopes)
		optionalKey(w, "client_id", s.ClientID)
		if s.StartTimeout != 0 {
			w("start_timeout = %s\n", quote(s.StartTimeout.String()))
		}
		if s.CallTimeout != 0 {
			w("call_timeout = %s\n", quote(s.CallTimeout.String()))
		}
	}
}

// MCPServerNamed returns the configured server called name.
func (c *Config) MCPServerNamed(name string) (MCPServer, bool) {
	i := slices.IndexFunc(c.MCP.Servers, func(s MCPServer) bool { return s.Name == name })
	if i < 0 {
		return MCPServer{}, false
	}
	return c.MCP.Servers[i], true
}

// exampleMCP explains [[mcp.servers]]; no server is configured by default.
const exampleMCP = `
# MCP servers whose tools the model may propose (mcp__NAME__tool), each
# through the same permission checks as every other tool. A server offers
# nothing until you have seen and trusted its tools: homard mcp trust NAME.
# If its tools change later they are withdrawn until you trust them again.
#   name          1 to 32 lowercase letters and digits, unique
#   command       a stdio server's argv, pinned: install it and give the
#                 program and its script (never npx)
#   env           its whole environment; nothing else is inherited
#   mounts        absolute folders it may read (its own files, a cache)
#   network       hosts it may reach, or true for the unfiltered network
#   secrets       vault secrets homard adds to its http:// requests for the
#                 hosts each is bound to, sent on over https (it never
#                 sees a value)
#   read_only     its tools you declare read-only: they run unasked in smart
#                 mode (the server's own annotations never count)
#   url           a streamable-HTTP server instead of command
#   token_secret  the vault secret sent to url as a bearer token
#                 (homard secret set NAME --host HOST)
#   auth          "oauth" for a server that asks for a login: homard mcp
#                 login NAME stores it in the vault, homard refreshes it
#   scopes        the scopes to ask for at login ([] keeps the server's)
#   client_id     a client registered with its authorization server (""
#                 means homard registers itself, where the server offers it)
#   start_timeout how long it may take to start and list its tools ("10s")
#   call_timeout  how long one tool call may take ("60s")
#
# [[mcp.servers]]
# name = "everything"
# command = ["node", "/opt/mcp/server-everything/dist/index.js", "stdio"]
# env = { PATH = "/usr/local/bin:/usr/bin:/bin" }
# mounts = ["/opt/mcp/server-everything"]
# network = []
# secrets = []
# read_only = ["echo"]
# start_timeout = "10s"
# call_timeout = "60s"
#
# [[mcp.servers]]
# name = "tracker"
# url = "https://mcp.tracker.example/mcp"
# token_secret = "tracker"
#
# [[mcp.servers]]
# name = "hosted"
# url = "https://mcp.hosted.example/mcp"
# auth = "oauth"
# scopes = []
# client_id = ""
`
