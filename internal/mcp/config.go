package mcp

import (
	"errors"
	"net/http"
	"time"
)

// Limits on what a server may send. A tool result's text is capped again
// (MaxText) after the frame that carried it was read within MaxLine or
// MaxHTTPBody: the SDK decodes a whole JSON-RPC frame, so the frame cap is
// what bounds memory before decoding.
const (
	MaxLine     = 4 << 20  // one stdio JSON-RPC line
	MaxHTTPBody = 8 << 20  // one HTTP response body (or one SSE event)
	MaxText     = 64 << 10 // the text of one tool result
	MaxPages    = 20       // tools/list pages followed
	MaxToolName = 64       // a mapped name, as the registry allows
	maxNameLen  = 32       // a server's configured name
)

// Defaults for the zero values of ServerConfig's timeouts, and the restart
// backoff of a server that stopped: the first restart may happen
// minBackoff after the stop, each further one waits twice as long, up to
// maxBackoff; a successful call resets it.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultCallTimeout  = 60 * time.Second
	minBackoff          = 1 * time.Second
	maxBackoff          = 1 * time.Minute
)

// ServerConfig is one [[mcp.servers]] entry, resolved by the caller: the
// token comes from the vault, the Transport from egress.
type ServerConfig struct {
	// Name is the server's name in tool names (mcp__NAME__tool): lowercase
	// letters and digits (ValidName).
	Name string
	// Command is the argv of a stdio server. Exactly one of Command and URL
	// is set.
	Command []string
	// Env is the whole environment of a stdio server: nothing else is
	// inherited. Nil means an empty environment.
	Env map[string]string
	// URL is the endpoint of a streamable-HTTP server (http or https).
	URL string
	// Token is sent as "Authorization: Bearer TOKEN" to URL. Empty sends none.
	Token string
	// OAuth is the server's login instead of Token: its access token is
	// sent to URL alone, refreshed before it expires and once when the
	// server refuses it. Nil means none.
	OAuth *OAuth
	// Transport carries the HTTP requests to URL. Nil means
	// http.DefaultTransport; the app passes its egress proxy's.
	Transport http.RoundTripper
	// ReadOnly lists the tools (their original names) the operator declares
	// read-only. A server's own annotations are never read for this.
	ReadOnly []string
	// StartTimeout bounds starting the server, its initialize handshake and
	// its first tool listing. Zero means DefaultStartTimeout.
	StartTimeout time.Duration
	// CallTimeout bounds one tools/call and one full listing. Zero means
	// DefaultCallTimeout.
	CallTimeout time.Duration
}

func (c ServerConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return DefaultStartTimeout
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

// ValidName reports whether name can name a server: 1 to 32 lowercase ASCII
// letters and digits, so mcp__NAME__ never needs mapping and leaves room
// for the tool's own name within MaxToolName.
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Errors a caller checks with errors.Is.
var (
	// ErrNotTrusted: Call before Pin; the owner has not trusted the server.
	ErrNotTrusted = errors.New("mcp server not trusted")
	// ErrToolsChanged: the server's tools or instructions no longer match
	// the pinned fingerprint (a "rug pull" or an upgrade).
	ErrToolsChanged = errors.New("mcp server's tools changed since they were trusted")
	// ErrRestarting: the server stopped and its backoff has not elapsed.
	ErrRestarting = errors.New("mcp server stopped")
	// ErrUnknownTool: the tool is not among the server's offered tools.
	ErrUnknownTool = errors.New("mcp tool not offered")
	// ErrClosed: the Server was closed.
	ErrClosed = errors.New("mcp server closed")
)
