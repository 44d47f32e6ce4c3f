package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/audit"
	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/tool"
)

// Status of a configured MCP server (MCPServerReport.Status).
const (
	MCPTrusted = "trusted" // its listing matches the trusted one: tools offered
	MCPNew     = "new"     // never trusted: no tools until `homard mcp trust`
	MCPChanged = "changed" // its listing changed since it was trusted: tools withdrawn
	MCPFailed  = "failed"  // it did not start or list its tools: Error says why
	MCPOff     = "not started"
)

// MCPServerReport is what homard knows of one configured MCP server: what
// `homard mcp list|test|trust` and doctor show. Tools, Description and
// Instructions are the server's words: print them through termtext.
type MCPServerReport struct {
	Name string `json:"name"`
	// Transport is "stdio" (command) or "http" (url).
	Transport string `json:"transport"`
	// Status is MCPTrusted, MCPNew, MCPChanged, MCPFailed or MCPOff.
	Status string `json:"status"`
	// Error says why a failed server failed.
	Error string `json:"error,omitempty"`
	// Fingerprint is the current listing's; TrustedFingerprint the one the
	// owner accepted ("" when never trusted).
	Fingerprint        string    `json:"fingerprint,omitempty"`
	TrustedFingerprint string    `json:"trusted_fingerprint,omitempty"`
	TrustedAt          time.Time `json:"trusted_at,omitzero"`
	// StartMillis is how long starting and listing took.
	StartMillis  int64     `json:"start_ms"`
	Instructions string    `json:"instructions"`
	Tools        []MCPTool `json:"tools"`
	// Truncated: the server had more than mcp.MaxPages pages of tools.
	Truncated bool `json:"truncated,omitempty"`
	// NetworkAll: the server has the unfiltered host network (network = true).
	NetworkAll bool `json:"network_all,omitempty"`
	// Login is the login of a server with auth = "oauth"; nil for others.
	Login *MCPLogin `json:"login,omitempty"`
}

// MCPTool is one tool a server lists.
type MCPTool struct {
	// Name is the tool's name on the server; Mapped its registry name.
	Name        string          `json:"name"`
	Mapped      string          `json:"mapped"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	// ReadOnly: listed in the server's read_only (never from annotations).
	ReadOnly bool `json:"read_only"`
	// Refused says why the tool is never offered (a name too long or
	// colliding once mapped).
	Refused string `json:"refused,omitempty"`
}

// mcpHub holds the servers StartMCP connected; Close closes them.
type mcpHub struct {
	// mu guards servers and reports.
	mu      sync.Mutex
	servers []*mcp.Server
	reports []MCPServerReport
}

// MCPServers reports the configured servers as StartMCP found them (their
// status, and the tools of the ones it offers). Before StartMCP (app's
// Options.SkipMCP, or doctor) every server is MCPOff.
func (s *Service) MCPServers() []MCPServerReport {
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	var out []MCPServerReport
	if s.mcp.reports == nil {
		out = make([]MCPServerReport, 0, len(s.o.Config.MCP.Servers))
		for _, sc := range s.o.Config.MCP.Servers {
			out = append(out, MCPServerReport{Name: sc.Name, Transport: transportOf(sc), Status: MCPOff, NetworkAll: sc.Network.All, Tools: []MCPTool{}})
		}
	} else {
		out = append([]MCPServerReport(nil), s.mcp.reports...)
	}
	for i := range out { // read now: a start may have refreshed it since
		out[i].Login = s.MCPLoginOf(out[i].Name)
	}
	return out
}

// mcpLauncher is how a stdio server's process is started: in the
// sandbox's service profile (mcplaunch.go), with the machine's network
// only when the operator opted in with network = true (doctor flags it).
func (s *Service) mcpLauncher(sc config.MCPServer) mcp.Launcher {
	return sandboxLauncher{s: s, client: s.o.Egress, name: sc.Name, mounts: sc.Mounts, hosts: sc.Network.Hosts,
		secrets: sc.Secrets, hostNetwork: sc.Network.All}
}

// mcpConfig resolves one [[mcp.servers]] entry. A url server is reached
// through egress (Options.Egress's Transport): the SSRF rules apply, so a private
// or loopback url, plain http or a port other than 443 is refused unless
// [egress] allow lists its exact endpoint — checked here first, before
// the token is released — and names are checked again when dialled. The
// token comes from the vault, released only to the url's host.
func (s *Service) mcpConfig(sc config.MCPServer) (mcp.ServerConfig, error) {
	cfg := mcp.ServerConfig{
		Name: sc.Name, Command: sc.Command, Env: sc.Env, URL: sc.URL, ReadOnly: sc.ReadOnly,
		StartTimeout: sc.StartTimeout.Std(), CallTimeout: sc.CallTimeout.Std(),
	}
	if sc.URL != "" {
		if s.o.Egress == nil {
			return cfg, fmt.Errorf("mcp server %s: no egress client to reach %s through", sc.Name, sc.URL)
		}
		if err := s.o.Egress.Check(sc.URL); err != nil {
			return cfg, fmt.Errorf("mcp server %s: url %s: %w", sc.Name, sc.URL, err)
		}
		cfg.Transport = s.o.Egress.Transport()
	}
	if sc.Auth == MCPAuthOAuth {
		ts, err := s.mcpLogin(sc)
		if err != nil {
			return cfg, err
		}
		cfg.OAuth = &mcp.OAuth{Tokens: ts, Save: func(next mcp.TokenSet) error { return s.saveMCPLogin(sc, next) }}
	}
	if sc.TokenSecret != "" {
		u, err := url.Parse(sc.URL)
		if err != nil || u.Host == "" {
			return cfg, fmt.Errorf("mcp server %s: url %q has no host to release secret %q to", sc.Name, sc.URL, sc.TokenSecret)
		}
		host := strings.ToLower(u.Host)
		tok, err := s.o.Vault.ReleaseValue(sc.TokenSecret, u.Scheme, host)
		if err != nil {
			return cfg, fmt.Errorf("mcp server %s: token_secret %s: %w (store it with homard secret set %s --host %s)", sc.Name, sc.TokenSecret, err, sc.TokenSecret, host)
		}
		cfg.Token = tok
	}
	return cfg, nil
}

// connectMCP starts one server and compares its listing with the trusted
// one. srv is nil when the server failed.
func (s *Service) connectMCP(ctx context.Context, sc config.MCPServer) (*mcp.Server, mcp.Listing, MCPServerReport) {
	rep := MCPServerReport{Name: sc.Name, Transport: transportOf(sc), Status: MCPFailed, NetworkAll: sc.Network.All, Tools: []MCPTool{}}
	cfg, err := s.mcpConfig(sc)
	if err != nil {
		rep.Error = err.Error()
		return nil, mcp.Listing{}, rep
	}
	var launcher mcp.Launcher
	if sc.URL == "" {
		launcher = s.mcpLauncher(sc)
	}
	start := time.Now()
	srv, err := mcp.Connect(ctx, cfg, launcher)
	if err != nil {
		rep.Error = err.Error()
		return nil, mcp.Listing{}, rep
	}
	listing, err := srv.Tools(ctx)
	rep.StartMillis = time.Since(start).Milliseconds()
	if err != nil {
		_ = srv.Close()
		rep.Error = err.Error()
		return nil, mcp.Listing{}, rep
	}
	rep.Fingerprint, rep.Instructions, rep.Truncated = listing.Fingerprint, listing.Instructions, listing.Truncated
	for _, t := range listing.Tools {
		rep.Tools = append(rep.Tools, MCPTool{Name: t.Name, Mapped: t.Mapped, Description: t.Description, InputSchema: t.InputSchema, ReadOnly: t.ReadOnly, Refused: t.Refused})
	}
	trust, err := s.o.Store.MCPTrust(ctx, sc.Name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		rep.Status = MCPNew
	case err != nil:
		_ = srv.Close()
		rep.Error = err.Error()
		return nil, mcp.Listing{}, rep
	case trust.Fingerprint == listing.Fingerprint:
		rep.Status, rep.TrustedFingerprint, rep.TrustedAt = MCPTrusted, trust.Fingerprint, trust.TrustedAt
	default:
		rep.Status, rep.TrustedFingerprint, rep.TrustedAt = MCPChanged, trust.Fingerprint, trust.TrustedAt
	}
	return srv, listing, rep
}

// StartMCP connects every configured server at once and returns the tools
// of the trusted ones, in configuration order. A server that fails, is new
// or changed offers nothing and is closed; homard starts anyway. Close
// closes the servers it keeps.
func (s *Service) StartMCP(ctx context.Context) []tool.Tool {
	servers := s.o.Config.MCP.Servers
	type result struct {
		srv     *mcp.Server
		listing mcp.Listing
		rep     MCPServerReport
	}
	results := make([]result, len(servers))
	var wg sync.WaitGroup
	for i, sc := range servers {
		wg.Go(func() {
			srv, l, rep := s.connectMCP(ctx, sc)
			results[i] = result{srv, l, rep}
		})
	}
	wg.Wait()

	var out []tool.Tool
	s.mcp.mu.Lock()
	defer s.mcp.mu.Unlock()
	s.mcp.reports = make([]MCPServerReport, 0, len(servers))
	for i, res := range results {
		sc := servers[i]
		switch res.rep.Status {
		case MCPTrusted:
			res.srv.Pin(res.listing.Fingerprint)
			s.mcp.servers = append(s.mcp.servers, res.srv)
			action := mcpAction(sc)
			// The listing's fingerprint is the pinned one, so its schemas
			// are the ones the owner trusted: each tool checks its calls
			// against its own, compiled once here.
			for _, t := range res.listing.Offered() {
				schema, err := mcp.CompileSchema(t.InputSchema)
				if err != nil { // Offered leaves such a tool out already
					s.logger().Warn("mcp tool's input schema cannot be checked; the tool is left out", "server", sc.Name, "tool", t.Name, "err", err)
					continue
				}
				out = append(out, &mcpTool{srv: res.srv, t: t, schema: schema, action: action, st: s.o.Store, now: s.now, redactor: s.o.Redactor})
			}
		case MCPChanged:
			s.logger().Warn("mcp server's tools changed since they were trusted; its tools are withdrawn until trusted again",
				"server", sc.Name, "trusted", res.rep.TrustedFingerprint, "now", res.rep.Fingerprint, "next", "homard mcp trust "+sc.Name)
			s.auditMCPChanged(ctx, sc.Name, res.rep)
			_ = res.srv.Close()
		case MCPNew:
			_ = res.srv.Close()
		case MCPFailed:
			s.logger().Warn("mcp server did not start; its tools are absent", "server", sc.Name, "err", res.rep.Error)
		}
		s.mcp.reports = append(s.mcp.reports, res.rep)
	}
	return out
}

// closeMCP closes every server StartMCP connected.
func (s *Service) closeMCP() error {
	s.mcp.mu.Lock()
	servers := s.mcp.servers
	s.mcp.servers = nil
	s.mcp.mu.Unlock()
	var errs []error
	for _, srv := range servers {
		errs = append(errs, srv.Close())
	}
	return errors.Join(errs...)
}

// InspectMCP starts the configured server name on its own, lists its
// tools and stops it: what `homard mcp test` and `trust` show. The report
// says whether its listing is the trusted one; nothing is trusted here.
func (s *Service) InspectMCP(ctx context.Context, name string) (MCPServerReport, error) {
	sc, ok := s.o.Config.MCPServerNamed(name)
	if !ok {
		return MCPServerReport{}, fmt.Errorf("no MCP server named %q in %s: add a [[mcp.servers]] table (docs/CONFIG.md)", name, s.o.Paths.ConfigFile)
	}
	srv, _, rep := s.connectMCP(ctx, sc)
	if srv != nil {
		_ = srv.Close()
	}
	rep.Login = s.MCPLoginOf(name)
	if rep.Status == MCPFailed {
		return rep, fmt.Errorf("mcp server %s did not start: %s", name, rep.Error)
	}
	return rep, nil
}

// TrustMCP records rep (a report InspectMCP returned and the owner saw) as
// the trusted listing of its server. The tools are offered from the next
// start of homard (a running serve keeps the list it started with).
func (s *Service) TrustMCP(ctx context.Context, rep MCPServerReport) error {
	if _, ok := s.o.Config.MCPServerNamed(rep.Name); !ok {
		return fmt.Errorf("no MCP server named %q in %s", rep.Name, s.o.Paths.ConfigFile)
	}
	if rep.Status == MCPFailed || rep.Fingerprint == "" {
		return fmt.Errorf("mcp server %s: nothing to trust: it did not list its tools (homard mcp test %s says why)", rep.Name, rep.Name)
	}
	tools, err := json.Marshal(rep.Tools)
	if err != nil {
		return fmt.Errorf("trust mcp server %s: %w", rep.Name, err)
	}
	return s.o.Store.Write(ctx, func(tx *store.Tx) error {
		return tx.TrustMCP(store.MCPTrust{Server: rep.Name, Fingerprint: rep.Fingerprint, ToolsJSON: string(tools), Instructions: rep.Instructions, TrustedAt: s.now()})
	})
}

func transportOf(sc config.MCPServer) string {
	if sc.URL != "" {
		return "http"
	}
	return "stdio"
}

// MCPChecks are doctor's lines for the configured servers: each is
// started and listed on its own (doctor does not StartMCP). A server that
// fails, is new or changed is information, not a failed home: homard runs
// without its tools. network = true is flagged.
func (s *Service) MCPChecks(ctx context.Context) []Check {
	var out []Check
	for _, sc := range s.o.Config.MCP.Servers {
		srv, _, rep := s.connectMCP(ctx, sc)
		if srv != nil {
			_ = srv.Close()
		}
		c := Check{Name: "mcp", Info: true}
		switch rep.Status {
		case MCPTrusted:
			c = Check{Name: "mcp", OK: true, Detail: fmt.Sprintf("%s: trusted, %d tools, started in %d ms", sc.Name, len(rep.Tools), rep.StartMillis)}
		case MCPNew:
			c.Detail = fmt.Sprintf("%s: new: needs trust; it offers no tools until you run homard mcp trust %s", sc.Name, sc.Name)
		case MCPChanged:
			c.Detail = fmt.Sprintf("%s: changed: needs trust; its tools changed since you trusted them and are withdrawn: review them with homard mcp trust %s", sc.Name, sc.Name)
		default:
			c.Detail = fmt.Sprintf("%s: did not start, so its tools are absent: %s (homard mcp test %s retries)", sc.Name, rep.Error, sc.Name)
		}
		out = append(out, c)
		if l := s.MCPLoginOf(sc.Name); l != nil && l.LoggedIn {
			out = append(out, Check{Name: "mcp", Info: true, Detail: sc.Name + ": logged in; its token expires " + l.Expires.Local().Format(time.DateTime) + " (refreshed before)"})
		}
		if sc.Network.All {
			out = append(out, Check{Name: "mcp", Info: true, Detail: fmt.Sprintf("%s: network = true gives it the unfiltered host network: list the hosts it needs instead (network = [\"api.example.com\"])", sc.Name)})
		}
	}
	return out
}

// auditMCPChanged appends one denied audit record the first time a
// server's listing is found changed since it was trusted (a rug pull): its
// tools are withdrawn. Later starts with the same listing add nothing.
func (s *Service) auditMCPChanged(ctx context.Context, server string, rep MCPServerReport) {
	err := s.o.Store.Write(ctx, func(tx *store.Tx) error {
		first, err := tx.MarkMCPChanged(server, rep.Fingerprint)
		if err != nil || !first {
			return err
		}
		_, err = audit.Append(tx, audit.Record{
			Time: s.now(), Owner: s.o.Config.Owner, Session: "mcp", Trust: policy.TrustOwner,
			Tool: "mcp__" + server, Decision: audit.Denied, Rule: policy.RuleMCPChanged,
			Reason: "the server's tools changed since they were trusted (" + rep.TrustedFingerprint + " → " + rep.Fingerprint + "); its tools are withdrawn until homard mcp trust " + server,
			Args:   `{"server":` + strconv.Quote(server) + `}`,
		})
		return err
	})
	if err != nil {
		s.logger().Warn("audit a changed mcp server", "server", server, "err", err)
	}
}
