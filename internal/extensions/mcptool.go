package extensions

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/homard/homard/internal/config"
	"github.com/homard/homard/internal/mcp"
	"github.com/homard/homard/internal/policy"
	"github.com/homard/homard/internal/store"
	"github.com/homard/homard/internal/termtext"
	"github.com/homard/homard/internal/tool"
)

// mcpTool is one trusted MCP server tool in the registry, named
// mcp__<server>__<tool>. Its Plan is (server, the tool's own name, the
// canonical arguments); it runs through the arbiter like every tool.
type mcpTool struct {
	srv *mcp.Server
	// t is the tool as listed when homard started, in the listing whose
	// fingerprint equals the one the owner trusted: its InputSchema is
	// the pinned one. schema is that schema compiled; a listing the
	// server sends later is never used to check arguments.
	t      mcp.Tool
	schema *mcp.Schema
	action policy.Action
	st     *store.Store
	now    func() time.Time
	// redactor hides secrets in the arguments the card shows (the
	// arbiter redacts a card's preview, not its Display).
	redactor Redactor
}

var _ tool.Tool = (*mcpTool)(nil)

// mcpPlan is an MCP call's Plan body.
type mcpPlan struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// mcpAction is what a call of the server's tools does as far as policy
// can tell: a server that can reach the network (an HTTP server, or one
// with network) may send what it is given out, so its calls are sends,
// which the private-data rule asks for in autopilot; others run a program.
func mcpAction(sc config.MCPServer) policy.Action {
	if sc.URL != "" || sc.Network.Any() {
		return policy.ActionSend
	}
	return policy.ActionExec
}

// risk is medium (smart mode asks), low only for a tool the operator
// listed in read_only: a server's own annotations never lower it.
func (m *mcpTool) risk() policy.Risk {
	if m.t.ReadOnly {
		return policy.RiskLow
	}
	return policy.RiskMedium
}

func (m *mcpTool) Spec() tool.Spec {
	return tool.Spec{
		Name: m.t.Mapped, Description: m.t.Description, Schema: m.t.InputSchema,
		Action: m.action, Risk: m.risk(), ReadOnly: m.t.ReadOnly,
	}
}

// Decode checks the arguments strictly (an object, no duplicate or
// case-folded keys, within the default limits, numbers JCS can write
// exactly) and returns their canonical form. Prepare checks them against
// the pinned schema.
func (m *mcpTool) Decode(raw []byte) (any, error) {
	var obj map[string]any
	if err := tool.DecodeStrict(raw, &obj, tool.DefaultLimits); err != nil {
		return nil, err
	}
	if obj == nil && len(strings.TrimSpace(string(raw))) > 0 {
		return nil, fmt.Errorf("%w: want the arguments as a JSON object", tool.ErrArguments)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = []byte("{}")
	}
	canon, err := tool.Canonical(json.RawMessage(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", tool.ErrArguments, err)
	}
	return json.RawMessage(canon), nil
}

func (m *mcpTool) Prepare(_ context.Context, params any) (tool.Plan, error) {
	args, ok := params.(json.RawMessage)
	if !ok {
		return tool.Plan{}, fmt.Errorf("tool %s: prepare: params of type %T", m.t.Mapped, params)
	}
	// Homard checks the arguments, not only the server: only names the
	// pinned schema declares, and values valid against it. A mismatch is
	// the model's to fix, so an error result, not a failed turn.
	if err := m.schema.Check(args); err != nil {
		return tool.Plan{}, tool.InvalidArgs("%s: %v", m.t.Mapped, err)
	}
	return tool.NewPlan(tool.PlanSpec{
		Tool: m.t.Mapped, Action: m.action, Risk: m.risk(), ReadOnly: m.t.ReadOnly,
		Display: mcpDisplay(m.t, args, m.redactor),
		// Arguments are the canonical bytes Run sends as they are: the
		// approval's hash binds exactly what the server receives.
		Body: mcpPlan{Server: m.t.Server, Tool: m.t.Name, Arguments: args},
	})
}

// Bounds on an MCP call's Display: at most maxDisplayArgs arguments, one
// line each, cut at maxDisplayLine bytes. The card's preview (the whole
// Plan body, redacted by the arbiter) and the Plan's hash hold them all.
const (
	maxDisplayArgs = 16
	maxDisplayLine = 240
)

// mcpDisplay is what the owner reads on an MCP call's card: the tool, the
// server and each argument as `"name": value` in canonical JSON, redacted
// before it is cut (a secret cut in two would no longer be recognised),
// its hidden characters shown as escapes (termtext.Line).
func mcpDisplay(t mcp.Tool, args json.RawMessage, red Redactor) string {
	head := fmt.Sprintf("call %s on MCP server %s", termtext.Line(t.Name), t.Server)
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || len(obj) == 0 {
		return head + " with no arguments"
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(head)
	if len(names) == 1 {
		b.WriteString(" with 1 argument:")
	} else {
		fmt.Fprintf(&b, " with %d arguments:", len(names))
	}
	for i, name := range names {
		if i == maxDisplayArgs {
			fmt.Fprintf(&b, "\n  … and %d more arguments: the preview shows them all", len(names)-i)
			break
		}
		key, err := tool.Canonical(name)
		if err != nil {
			key = []byte(strconv.Quote(name))
		}
		line := string(key) + ": " + string(obj[name])
		if red != nil {
			line = red.Redact(line)
		}
		if len(line) > maxDisplayLine {
			cut := line[:maxDisplayLine]
			for len(cut) > 0 && !utf8.RuneStart(line[len(cut)]) {
				cut = cut[:len(cut)-1]
			}
			line = fmt.Sprintf("%s … [%d more bytes]", cut, len(line)-len(cut))
		}
		b.WriteString("\n  " + termtext.Line(line))
	}
	return b.String()
}

// Run calls the tool. What the server answered reaches the model only as
// untrusted text; a server that changed its tools, stopped or timed out is
// an error result naming the server, not a failed turn.
func (m *mcpTool) Run(ctx context.Context, plan tool.Plan) (tool.Result, error) {
	if plan.Tool() != m.t.Mapped {
		return tool.Result{}, fmt.Errorf("tool %s: refusing to run a plan for %q", m.t.Mapped, plan.Tool())
	}
	var p mcpPlan
	if err := plan.Decode(&p); err != nil {
		return tool.Result{}, err
	}
	if p.Server != m.t.Server || p.Tool != m.t.Name {
		return tool.Result{}, fmt.Errorf("tool %s: plan names %s on %s", m.t.Mapped, p.Tool, p.Server)
	}
	res, err := m.srv.Call(ctx, p.Tool, p.Arguments)
	if err != nil {
		if errors.Is(err, mcp.ErrToolsChanged) || errors.Is(err, mcp.ErrNotTrusted) {
			return tool.Errorf("the tools of MCP server %s changed since the owner trusted them, so they are withdrawn until the owner runs homard mcp trust %s", m.t.Server, m.t.Server), nil
		}
		return tool.Errorf("MCP server %s: %v", m.t.Server, err), nil
	}
	var lines []string
	if res.Text != "" {
		lines = append(lines, res.Text)
	}
	if res.Truncated {
		lines = append(lines, fmt.Sprintf("[homard: the text was cut at %d bytes; %d bytes left out]", mcp.MaxText, res.Omitted))
	}
	for _, b := range res.Binary {
		line, err := m.storeBlob(ctx, b)
		if err != nil {
			return tool.Result{}, err
		}
		lines = append(lines, line)
	}
	for _, ph := range res.Placeholders {
		lines = append(lines, "[homard: the result held "+ph+"]")
	}
	return tool.Result{Text: strings.Join(lines, "\n"), IsError: res.IsError, Untrusted: true}, nil
}

// maxBlob caps one binary part kept as an artifact.
const maxBlob = 4 << 20

// mimeRE is a plain type/subtype; anything else the server declared is
// replaced, since the type is shown and used.
// Compiled on first use: its counted repetitions are a large program an
// idle homard without MCP servers need not hold.
var mimeRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9.+-]{0,63}/[a-z0-9][a-z0-9.+-]{0,63}$`)
})

// storeBlob keeps a binary part as an untrusted artifact of the caller's
// session (a data: URL, base64) and returns the line that names it.
func (m *mcpTool) storeBlob(ctx context.Context, b mcp.Blob) (string, error) {
	mime := strings.ToLower(b.MIME)
	if !mimeRE().MatchString(mime) {
		mime = "application/octet-stream"
	}
	if len(b.Data) > maxBlob {
		return fmt.Sprintf("[homard: the result held %s (%s, %d bytes), over the %d MiB kept; not stored]", b.Kind, mime, len(b.Data), maxBlob>>20), nil
	}
	c, ok := tool.CallerFrom(ctx)
	if !ok || c.Session == "" {
		return fmt.Sprintf("[homard: the result held %s (%s, %d bytes); not stored: no session to keep it in]", b.Kind, mime, len(b.Data)), nil
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	id := "art_" + hex.EncodeToString(rnd[:])
	err := m.st.Write(ctx, func(tx *store.Tx) error {
		return tx.InsertArtifact(store.Artifact{
			ID: id, Owner: c.Owner, Session: c.Session, ToolRun: c.Run, Tool: m.t.Mapped, Untrusted: true, CreatedAt: m.now(),
			Text: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b.Data),
		})
	})
	if err != nil {
		return "", fmt.Errorf("keep %s from mcp server %s: %w", b.Kind, m.t.Server, err)
	}
	return fmt.Sprintf("[homard: the result held %s (%s, %d bytes); stored as artifact %s]", b.Kind, mime, len(b.Data), id), nil
}
