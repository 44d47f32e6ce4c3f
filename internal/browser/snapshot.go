package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// DefaultSnapshotBytes caps Snapshot.Text when maxBytes is 0 or less.
const DefaultSnapshotBytes = 4096

// maxName is how much of a name a snapshot line shows.
const maxName = 100

// refMap maps a snapshot's refs to DOM nodes of one tab. A new snapshot
// replaces it.
type refMap struct {
	tab  targetID
	refs map[string]backendNodeID
}

// interactive roles get a ref.
var interactive = map[string]bool{
	"link": true, "button": true, "textbox": true, "searchbox": true, "combobox": true,
	"checkbox": true, "radio": true, "menuitem": true, "menuitemcheckbox": true, "menuitemradio": true,
	"tab": true, "switch": true, "option": true, "slider": true, "spinbutton": true, "listbox": true,
}

// transparent roles are containers that add nothing a reader needs: they
// get no line, their children take their place.
var transparent = map[string]bool{
	"generic": true, "none": true, "presentation": true, "GenericContainer": true, "paragraph": true,
	"list": true, "listitem": true, "LayoutTable": true, "LayoutTableRow": true, "LayoutTableCell": true,
	"strong": true, "emphasis": true, "time": true, "mark": true, "code": true, "superscript": true,
	"subscript": true, "label": true, "Abbr": true, "Section": true, "group": true, "sectionheader": true,
	"sectionfooter": true, "DescriptionListDetail": true, "DescriptionListTerm": true, "insertion": true, "deletion": true,
	"LabelText": true, "MenuListPopup": true,
}

// skipped roles are left out with what they hold.
var skipped = map[string]bool{"InlineTextBox": true, "LineBreak": true, "ListMarker": true}

// Snapshot describes the active tab as indented text: its accessibility
// tree, with what a person cannot see left out (hidden.go), containers
// collapsed and interactive elements given refs for Click, Type, Select
// and Element. Text is capped at maxBytes (DefaultSnapshotBytes when 0 or
// less); Full is the whole of it.
func (b *Browser) Snapshot(ctx context.Context, maxBytes int) (Snapshot, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultSnapshotBytes
	}
	var snap Snapshot
	err := b.withActive(ctx, func(in *instance, t *tab) error {
		var tree axTreeResult
		if err := t.s.Call(ctx, cmdAccessibilityGetFullAXTree, &getFullAXTreeParams{}, &tree); err != nil {
			return fmt.Errorf("browser: snapshot: %w", err)
		}
		hidden, err := hiddenNodes(ctx, t.s)
		if err != nil {
			return fmt.Errorf("browser: snapshot: %w", err)
		}
		snap.PageInfo = in.pageInfo(ctx, t)
		full, refs := render(tree.Nodes, hidden, snap.PageInfo)
		b.mu.Lock()
		b.refs = refMap{tab: t.id, refs: refs}
		b.mu.Unlock()
		snap.Full = full
		snap.Text, snap.Truncated = capLines(full, maxBytes)
		return nil
	})
	return snap, err
}

// renderer turns an accessibility tree into lines.
type renderer struct {
	byID   map[string]*axNode
	hidden map[backendNodeID]bool
	lines  []string
	refs   map[string]backendNodeID
}

// render returns the snapshot text of nodes and its refs.
func render(nodes []*axNode, hidden map[backendNodeID]bool, pi PageInfo) (string, map[string]backendNodeID) {
	r := &renderer{byID: map[string]*axNode{}, hidden: hidden, refs: map[string]backendNodeID{}}
	var root *axNode
	for _, n := range nodes {
		r.byID[n.NodeID] = n
		if root == nil && n.ParentID == "" {
			root = n
		}
	}
	title := pi.Title
	if root != nil && valueString(root.Name) != "" {
		title = valueString(root.Name)
	}
	r.lines = append(r.lines, fmt.Sprintf("page %q %s", clean(title, maxName), clean(pi.URL, 300)))
	if root != nil {
		r.children(root, 1, clean(title, maxName))
	}
	return strings.Join(r.lines, "\n"), r.refs
}

func (r *renderer) children(n *axNode, depth int, parentName string) {
	for _, id := range n.ChildIDs {
		if c := r.byID[id]; c != nil {
			r.walk(c, depth, parentName)
		}
	}
}

// walk adds the lines of n and its subtree at depth.
func (r *renderer) walk(n *axNode, depth int, parentName string) {
	if n.BackendDOMNodeID != 0 && r.hidden[n.BackendDOMNodeID] {
		return
	}
	role := valueString(n.Role)
	if skipped[role] {
		return
	}
	if n.Ignored || role == "RootWebArea" || role == "WebArea" {
		r.children(n, depth, parentName)
		return
	}
	name := clean(valueString(n.Name), maxName)
	if role == "StaticText" {
		if name != "" && !strings.Contains(parentName, name) {
			r.lines = append(r.lines, strings.Repeat("  ", depth)+"text "+strconv.Quote(name))
		}
		return
	}
	isRef := interactive[role] && n.BackendDOMNodeID != 0
	if transparent[role] && !isRef && name == "" {
		r.children(n, depth, parentName)
		return
	}
	var line strings.Builder
	line.WriteString(strings.Repeat("  ", depth))
	line.WriteString(role)
	if name != "" {
		line.WriteString(" " + strconv.Quote(name))
	}
	if v := clean(valueString(n.Value), maxName); v != "" && v != name {
		line.WriteString(" value=" + strconv.Quote(v))
	}
	states := false
	for _, p := range n.Properties {
		switch p.Name {
		case "checked", "selected", "disabled", "expanded", "pressed", "required":
			if s := valueString(p.Value); s == "true" || s == "mixed" {
				line.WriteString(" " + p.Name)
				states = true
			}
		}
	}
	if isRef {
		ref := strconv.Itoa(len(r.refs) + 1)
		r.refs[ref] = n.BackendDOMNodeID
		line.WriteString(" [ref=" + ref + "]")
	}
	at := len(r.lines)
	r.lines = append(r.lines, line.String())
	r.children(n, depth+1, name)
	if len(r.lines) == at+1 && name == "" && !isRef && !states {
		r.lines = r.lines[:at] // an empty, unnamed container
	}
}

// capLines cuts text to at most max bytes on a line boundary, ending with
// a line that says how much was left out.
func capLines(text string, max int) (string, bool) {
	if len(text) <= max {
		return text, false
	}
	const reserve = 120 // the closing line
	lines := strings.Split(text, "\n")
	used, kept := 0, 0
	for _, l := range lines {
		if used+len(l)+1+reserve > max {
			break
		}
		used += len(l) + 1
		kept++
	}
	rest := len(text) - used
	footer := fmt.Sprintf("[%d more lines (%d bytes) left out: scroll, or open a narrower page]", len(lines)-kept, rest)
	out := strings.Join(lines[:kept], "\n")
	if kept > 0 {
		out += "\n"
	}
	out += footer
	if len(out) > max { // only when max is smaller than the footer
		out = shorten(out, max-len("…"))
	}
	return out, true
}

// valueString is an accessibility value as text.
func valueString(v *axValue) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var x any
	if err := json.Unmarshal(v.Value, &x); err != nil {
		return ""
	}
	switch x := x.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// clean makes s one line of at most n bytes: control and format
// characters (bidi overrides, zero-width spaces) are removed and runs of
// spaces are one space.
func clean(s string, n int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return shorten(b.String(), n)
}

// hiddenStyles are the computed styles hiddenNodes reads, in this order.
var hiddenStyles = []string{"opacity", "overflow-x", "overflow-y", "clip", "clip-path"}

// hiddenNodes returns the DOM nodes of the tab a person cannot see
// although the accessibility tree keeps them (it leaves out display:none,
// visibility:hidden and aria-hidden itself): fully transparent
// (opacity 0), clipped to a pixel or less (the "visually hidden" pattern:
// 1px box, overflow hidden, clip rect(0 0 0 0)), clipped away by
// clip-path, placed wholly above or left of the page (left:-9999px), or
// text laid out with no size (font-size 0). What is inside them is hidden
// too.
func hiddenNodes(ctx context.Context, s session) (map[backendNodeID]bool, error) {
	var snap captureSnapshotResult
	if err := s.Call(ctx, cmdDOMSnapshotCaptureSnapshot, &captureSnapshotParams{ComputedStyles: hiddenStyles}, &snap); err != nil {
		return nil, err
	}
	str := func(i int64) string {
		if i >= 0 && int(i) < len(snap.Strings) {
			return snap.Strings[i]
		}
		return ""
	}
	hidden := map[backendNodeID]bool{}
	for _, doc := range snap.Documents {
		if doc.Nodes == nil || doc.Layout == nil {
			continue
		}
		nodes, lay := doc.Nodes, doc.Layout
		self := make([]bool, len(nodes.ParentIndex))
		for li, ni := range lay.NodeIndex {
			if ni < 0 || int(ni) >= len(self) || li >= len(lay.Styles) || li >= len(lay.Bounds) {
				continue
			}
			st := lay.Styles[li]
			style := func(k int) string {
				if k < len(st) {
					return str(st[k])
				}
				return ""
			}
			bd := lay.Bounds[li]
			if len(bd) < 4 {
				continue
			}
			w, h := bd[2], bd[3]
			clips := style(1) != "visible" || style(2) != "visible" || (style(3) != "auto" && style(3) != "") || (style(4) != "none" && style(4) != "")
			isText := int(ni) < len(nodes.NodeType) && nodes.NodeType[ni] == 3
			cp := style(4)
			switch {
			case style(0) == "0":
			case clips && (w <= 1 || h <= 1):
			case strings.HasPrefix(cp, "inset(") && (strings.Contains(cp, "50%") || strings.Contains(cp, "100%")):
			case bd[0]+w < 0 || bd[1]+h < 0:
			case isText && (w == 0 || h == 0):
			default:
				continue
			}
			self[ni] = true
		}
		inherited := make([]bool, len(self))
		for i := range self {
			p := nodes.ParentIndex[i]
			inherited[i] = self[i] || (p >= 0 && int(p) < i && inherited[p])
			if inherited[i] && i < len(nodes.BackendNodeID) {
				hidden[nodes.BackendNodeID[i]] = true
			}
		}
	}
	return hidden, nil
}
