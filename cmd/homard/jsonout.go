package main

import (
	"time"

	"github.com/homard/homard/internal/app"
)

// The objects `--json` prints, one struct per object, documented field by
// field in docs/JSON.md (TestJSONDocMatchesStructs keeps the two equal).
// Rules: snake_case keys; times RFC 3339 in UTC; a time that has not
// happened is null, never a zero date; no secret value, token or key
// hash ever appears.

// memoryJSON is one unit of `homard memory list --json` and
// `homard memory search --json`.
type memoryJSON struct {
	ID      string     `json:"id"`
	Kind    string     `json:"kind"`
	Text    string     `json:"text"`
	Source  string     `json:"source"`
	Created time.Time  `json:"created"`
	Updated time.Time  `json:"updated"`
	Expires *time.Time `json:"expires"`
	Expired bool       `json:"expired"`
}

func memoryOut(u app.MemoryUnit, now time.Time) memoryJSON {
	return memoryJSON{ID: u.ID, Kind: string(u.Kind), Text: u.Text, Source: u.Source, Created: u.Created.UTC(),
		Updated: u.Updated.UTC(), Expires: timeOrNull(u.Expires), Expired: u.Expired(now)}
}

// anchorJSON is `homard audit anchor --json`: the chain's head.
type anchorJSON struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// tokenJSON is one token of `homard token list --json`: never its secret
// nor the secret's hash.
type tokenJSON struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

func tokenOut(t app.APIToken) tokenJSON {
	status := "valid"
	if !t.RevokedAt.IsZero() {
		status = "revoked"
	}
	return tokenJSON{ID: t.ID, Name: t.Name, Status: status, CreatedAt: t.CreatedAt.UTC(),
		LastUsedAt: timeOrNull(t.LastUsedAt), RevokedAt: timeOrNull(t.RevokedAt)}
}

// secretJSON is one entry of `homard secret list --json`: never its value.
type secretJSON struct {
	Name      string    `json:"name"`
	Hosts     []string  `json:"hosts"`
	Schemes   []string  `json:"schemes"`
	Header    string    `json:"header"`
	Format    string    `json:"format"`
	CreatedAt time.Time `json:"created_at"`
}

func secretOut(s app.Secret) secretJSON {
	schemes := []string{"https"}
	if s.AllowHTTP {
		schemes = append(schemes, "http")
	}
	hosts := s.Hosts
	if hosts == nil {
		hosts = []string{}
	}
	return secretJSON{Name: s.Name, Hosts: hosts, Schemes: schemes, Header: s.Header, Format: s.Format, CreatedAt: s.Created.UTC()}
}

// checkpointJSON is one checkpoint of `homard checkpoint list --json`.
type checkpointJSON struct {
	ID     string    `json:"id"`
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`
	Root   string    `json:"root"`
	Path   string    `json:"path"`
	Paths  int       `json:"paths"`
	Bytes  int64     `json:"bytes"`
	SHA256 string    `json:"sha256"`
	Pinned bool      `json:"pinned"`
}

func checkpointOut(cp app.Checkpoint) checkpointJSON {
	kind, paths := "file", 1
	if cp.Kind == app.CheckpointKindChanges {
		kind, paths = "changes", cp.Paths
	}
	return checkpointJSON{ID: cp.ID, Time: cp.Time.UTC(), Kind: kind, Root: cp.Root, Path: cp.Rel, Paths: paths,
		Bytes: cp.Size, SHA256: cp.SHA256, Pinned: cp.Pinned}
}

// sessionJSON is one session of `homard session list --json`, the shape
// of GET /api/sessions without "busy".
type sessionJSON struct {
	ID           string     `json:"id"`
	Title        string     `json:"title"`
	CreatedAt    time.Time  `json:"created_at"`
	Turns        int        `json:"turns"`
	LastAt       time.Time  `json:"last_at"`
	PrivateSince *time.Time `json:"private_since"`
}

func sessionOut(s app.SessionSummary) sessionJSON {
	return sessionJSON{ID: s.ID, Title: s.Title, CreatedAt: s.CreatedAt.UTC(), Turns: s.Turns, LastAt: s.LastAt.UTC(),
		PrivateSince: timeOrNull(s.PrivateSince)}
}

// timeOrNull is nil for the zero time, else t in UTC.
func timeOrNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
