package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// MCPTrust is the tool list of an MCP server the owner trusted.
type MCPTrust struct {
	// Server is the configured server name.
	Server string
	// Fingerprint is the trusted listing's fingerprint ("sha256:…").
	Fingerprint string
	// ToolsJSON is the tools as they were shown at trust time (JSON, as
	// the caller encoded them); Instructions the server's instructions.
	ToolsJSON    string
	Instructions string
	TrustedAt    time.Time
}

// TrustMCP records (or replaces) the trusted listing of t.Server.
func (tx *Tx) TrustMCP(t MCPTrust) error {
	if t.Server == "" || !strings.HasPrefix(t.Fingerprint, "sha256:") {
		return fmt.Errorf("trust mcp server %q: a server name and a sha256: fingerprint are required", t.Server)
	}
	_, err := tx.exec(`INSERT INTO mcp_trust (server, fingerprint, tools_json, instructions, trusted_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (server) DO UPDATE SET fingerprint = excluded.fingerprint, tools_json = excluded.tools_json,
			instructions = excluded.instructions, trusted_at = excluded.trusted_at`,
		t.Server, t.Fingerprint, t.ToolsJSON, t.Instructions, nanos(t.TrustedAt))
	if err != nil {
		return fmt.Errorf("trust mcp server %s: %w", t.Server, err)
	}
	return nil
}

// ForgetMCP removes the trust of server; forgetting an untrusted server
// is not an error.
func (tx *Tx) ForgetMCP(server string) error {
	if _, err := tx.exec(`DELETE FROM mcp_trust WHERE server = ?`, server); err != nil {
		return fmt.Errorf("forget mcp server %s: %w", server, err)
	}
	return nil
}

// MCPTrust returns the trusted listing of server, or ErrNotFound.
func (s *Store) MCPTrust(ctx context.Context, server string) (MCPTrust, error) {
	var t MCPTrust
	var at sql.NullInt64
	err := s.readRow(ctx, `SELECT server, fingerprint, tools_json, instructions, trusted_at FROM mcp_trust WHERE server = ?`, server).
		Scan(&t.Server, &t.Fingerprint, &t.ToolsJSON, &t.Instructions, &at)
	if err = rowErr(err, "mcp trust of", server); err != nil {
		return MCPTrust{}, err
	}
	t.TrustedAt = fromNanos(at)
	return t, nil
}

// MarkMCPChanged records that server now lists fingerprint, which differs
// from the trusted one, and reports whether that is news: first is false
// when this fingerprint was already recorded (the caller audits only news)
// or the server is not trusted at all.
func (tx *Tx) MarkMCPChanged(server, fingerprint string) (first bool, err error) {
	res, err := tx.exec(`UPDATE mcp_trust SET changed_seen = ? WHERE server = ? AND changed_seen != ? AND fingerprint != ?`,
		fingerprint, server, fingerprint, fingerprint)
	if err != nil {
		return false, fmt.Errorf("mark mcp server %s changed: %w", server, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
