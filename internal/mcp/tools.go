package mcp

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/homard/homard/internal/tool"
)

// Tool is one tool a server listed.
type Tool struct {
	Server string
	// Name is the tool's name on the server: what Call takes and what a
	// Plan records.
	Name string
	// Mapped is the registry's name, mcp__<server>__<tool> (MappedName).
	Mapped      string
	Description string
	// InputSchema is the server's schema, re-encoded (keys sorted).
	InputSchema json.RawMessage
	// ReadOnly is true only when the operator listed Name in read_only.
	ReadOnly bool
	// Refused says why the tool is not offered (a mapped name that collides
	// or is too long, an input schema homard cannot check); empty when it
	// is offered.
	Refused string
}

// Listing is a server's tool list at one moment.
type Listing struct {
	// Tools holds every tool the server listed, offered or refused, in the
	// server's order.
	Tools []Tool
	// Instructions is the server's initialize instructions: shown to the
	// owner at trust time and hashed, never given to the model.
	Instructions string
	// Fingerprint is Fingerprint(Tools, Instructions).
	Fingerprint string
	// Truncated: the server still had pages after MaxPages.
	Truncated bool
}

// Offered returns the tools that are not refused.
func (l Listing) Offered() []Tool {
	var out []Tool
	for _, t := range l.Tools {
		if t.Refused == "" {
			out = append(out, t)
		}
	}
	return out
}

func (l Listing) offers(name string) bool {
	return slices.ContainsFunc(l.Tools, func(t Tool) bool { return t.Name == name && t.Refused == "" })
}

// MappedName is a tool's name in the registry: mcp__SERVER__TOOL, with
// TOOL's ASCII letters lowercased and every byte outside [a-z0-9_]
// replaced by '_' (a multi-byte character becomes one '_'). It may exceed
// MaxToolName; buildListing refuses such a tool, it never truncates.
func MappedName(server, name string) string {
	var b strings.Builder
	b.WriteString("mcp__" + server + "__")
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// buildListing maps the tools a server listed. A tool whose mapped name is
// over MaxToolName, or equal to another tool's, is refused; a collision
// refuses every tool of the group, since no rule picks the one the owner
// meant. So is a tool whose input schema CompileSchema refuses.
func buildListing(server string, readOnly []string, listed []*sdk.Tool, instructions string) Listing {
	l := Listing{Instructions: instructions}
	count := map[string]int{}
	for _, t := range listed {
		if t == nil {
			continue
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			schema = []byte("null")
		}
		mt := Tool{
			Server:      server,
			Name:        t.Name,
			Mapped:      MappedName(server, t.Name),
			Description: t.Description,
			InputSchema: schema,
			ReadOnly:    slices.Contains(readOnly, t.Name),
		}
		count[mt.Mapped]++
		l.Tools = append(l.Tools, mt)
	}
	for i, t := range l.Tools {
		switch {
		case t.Name == "":
			l.Tools[i].Refused = "the tool has no name"
		case len(t.Mapped) > MaxToolName:
			l.Tools[i].Refused = fmt.Sprintf("its name is %d characters once mapped (%s); tool names are limited to %d", len(t.Mapped), t.Mapped, MaxToolName)
		case count[t.Mapped] > 1:
			l.Tools[i].Refused = fmt.Sprintf("%d of the server's tools map to the same name %s", count[t.Mapped], t.Mapped)
		default:
			// Every call's arguments are checked against the schema
			// before it is planned: a schema homard cannot check offers
			// no tool, rather than calls nothing checked.
			if _, err := CompileSchema(t.InputSchema); err != nil {
				l.Tools[i].Refused = "homard cannot check arguments against its input schema: " + err.Error()
			}
		}
	}
	l.Fingerprint = Fingerprint(l.Tools, instructions)
	return l
}

// Fingerprint is the trust-on-first-use pin of a server: a SHA-256 over the
// canonical (RFC 8785) JSON of its instructions and its tools' names,
// descriptions and input schemas, sorted, so the order a server lists them
// in does not matter and any change to one of them does. Mapping, refusals
// and ReadOnly are homard's and left out.
func Fingerprint(tools []Tool, instructions string) string {
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	entries := make([]entry, 0, len(tools))
	for _, t := range tools {
		schema := t.InputSchema
		if !json.Valid(schema) {
			b, _ := json.Marshal(string(schema)) // keep every byte in the hash
			schema = b
		}
		entries = append(entries, entry{t.Name, t.Description, schema})
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Description, b.Description), strings.Compare(string(a.InputSchema), string(b.InputSchema))) < 0
	})
	doc := struct {
		Version      int     `json:"v"`
		Instructions string  `json:"instructions"`
		Tools        []entry `json:"tools"`
	}{1, instructions, entries}
	enc, err := tool.Canonical(doc)
	if err != nil {
		// A number JCS cannot write exactly (beyond 2^53): json.Marshal's
		// form is still deterministic for the same input.
		enc, _ = json.Marshal(doc)
	}
	sum := sha256.Sum256(enc)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// list follows at most MaxPages pages of tools/list.
func (s *Server) list(ctx context.Context, cs *sdk.ClientSession, timeout string) (Listing, error) {
	var all []*sdk.Tool
	cursor := ""
	truncated := false
	for page := 0; ; page++ {
		if page == MaxPages {
			truncated = true
			break
		}
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return Listing{}, s.callError(ctx, "tools/list", timeout, err)
		}
		all = append(all, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	instructions := ""
	if ir := cs.InitializeResult(); ir != nil {
		instructions = ir.Instructions
	}
	l := buildListing(s.cfg.Name, s.cfg.ReadOnly, all, instructions)
	l.Truncated = truncated
	return l, nil
}
