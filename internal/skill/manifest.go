// Package skill installs, pins and describes skills: folders under homard's
// data folder (skills/NAME/) holding SKILL.md (front matter name and
// description, then instructions for the model) and skill.json (the argv
// entrypoint, a JSON schema of its parameters and the permissions it needs).
//
// Contract: skills are read only from Library's folder, never from the
// current directory or a workspace. A skill tree holds only folders and
// regular files (no symlinks, devices, sockets or FIFOs), names a person can
// read, and stays under size and count caps; its hash covers every path,
// executable bit and content. Inspect reads a tree into memory and Install
// writes exactly those bytes, so what the owner reviewed is what is
// installed. Trust is pinned by that hash in the database (store's
// skill_trust table): a tree that changes afterwards is withdrawn until the
// owner trusts it again. Parsing is strict: unknown fields are refused with
// the file and field named. Arguments are validated against the declared
// schema and become argv as entrypoint + --name=value, one per given
// parameter in name order; running is the caller's (an injected runner in
// the service sandbox), with exactly the declared permissions.
package skill

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/homard/homard/internal/termtext"
	"github.com/homard/homard/internal/tool"
)

// The files every skill has.
const (
	DocFile      = "SKILL.md"
	ManifestFile = "skill.json"
)

// MaxDescription is the longest description, in characters.
const MaxDescription = 200

// The manifest's name patterns, compiled on first use: the host pattern's
// counted repetitions are large compiled programs an idle homard (no skill
// installed) need not hold.
var (
	nameRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`) })
	paramRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`) })
	rootRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`) })
	hostRe  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)
	})
)

// Manifest is a skill's parsed SKILL.md front matter and skill.json.
type Manifest struct {
	Name        string
	Description string
	// Doc is the whole SKILL.md, front matter included.
	Doc        string
	Entrypoint []string
	Params     Params
	Perms      Permissions
}

// Permissions are what a skill declares it needs; it gets exactly these.
type Permissions struct {
	Roots   []Root   `json:"roots,omitempty"`
	Hosts   []string `json:"hosts,omitempty"`
	Secrets []string `json:"secrets,omitempty"`
}

// Root is a workspace root a skill may see.
type Root struct {
	Name   string `json:"name"`
	Access string `json:"access"` // "ro" or "rw"
}

// Params is a skill's parameter schema: an object of named scalars.
type Params struct {
	Properties map[string]Param
	Required   []string
	resolved   *jsonschema.Resolved
}

// Param is one declared parameter.
type Param struct {
	Type        string   `json:"type"` // string, integer, number or boolean
	Description string   `json:"description,omitempty"`
	Enum        []any    `json:"enum,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	MinLength   *int     `json:"minLength,omitempty"`
	MaxLength   *int     `json:"maxLength,omitempty"`
	Pattern     string   `json:"pattern,omitempty"`
}

// fileJSON is skill.json as written.
type fileJSON struct {
	Entrypoint  []string    `json:"entrypoint"`
	Parameters  schemaJSON  `json:"parameters"`
	Permissions Permissions `json:"permissions"`
}

// schemaJSON is the parameters schema as written.
type schemaJSON struct {
	Type                 string           `json:"type"`
	Properties           map[string]Param `json:"properties"`
	Required             []string         `json:"required,omitempty"`
	AdditionalProperties *bool            `json:"additionalProperties"`
}

var manifestLimits = tool.Limits{MaxBytes: 64 << 10, MaxString: 4 << 10, MaxItems: 64, MaxDepth: 8}

func manifestErr(file, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrManifest, file, fmt.Sprintf(format, args...))
}

// Parse reads a skill's SKILL.md and skill.json. dir is the skill's folder
// name, which must equal the front matter's name; files maps slash paths
// to contents (what Inspect read).
func Parse(dir string, files map[string][]byte) (Manifest, error) {
	doc, ok := files[DocFile]
	if !ok {
		return Manifest{}, manifestErr(DocFile, "missing; a skill needs SKILL.md with name and description front matter")
	}
	raw, ok := files[ManifestFile]
	if !ok {
		return Manifest{}, manifestErr(ManifestFile, "missing; a skill needs skill.json with entrypoint, parameters and permissions")
	}
	m, err := parseDoc(doc)
	if err != nil {
		return Manifest{}, err
	}
	if dir != "" && m.Name != dir {
		return Manifest{}, manifestErr(DocFile, "name %q does not match the skill's folder %q; rename one", m.Name, dir)
	}
	var f fileJSON
	if err := tool.DecodeStrict(raw, &f, manifestLimits); err != nil {
		return Manifest{}, manifestErr(ManifestFile, "%s", strings.TrimPrefix(err.Error(), tool.ErrArguments.Error()+": "))
	}
	if err := checkEntrypoint(f.Entrypoint, files); err != nil {
		return Manifest{}, err
	}
	m.Entrypoint = f.Entrypoint
	if m.Params, err = parseParams(f.Parameters); err != nil {
		return Manifest{}, err
	}
	if err := checkPerms(f.Permissions); err != nil {
		return Manifest{}, err
	}
	m.Perms = f.Permissions
	return m, nil
}

// parseDoc reads SKILL.md's front matter: "---", then "name: …" and
// "description: …" lines, then "---".
func parseDoc(doc []byte) (Manifest, error) {
	if !utf8.Valid(doc) || bytes.IndexByte(doc, 0) >= 0 {
		return Manifest{}, manifestErr(DocFile, "not UTF-8 text")
	}
	sc := bufio.NewScanner(bytes.NewReader(doc))
	sc.Buffer(nil, len(doc)+1)
	if !sc.Scan() || strings.TrimRight(sc.Text(), "\r") != "---" {
		return Manifest{}, manifestErr(DocFile, `must start with front matter: a line "---", then name: and description:, then "---"`)
	}
	m := Manifest{Doc: string(doc)}
	seen := map[string]bool{}
	closed := false
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "---" {
			closed = true
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			return Manifest{}, manifestErr(DocFile, "front matter line %q is not \"key: value\"", termtext.Line(line))
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if seen[key] {
			return Manifest{}, manifestErr(DocFile, "front matter field %q appears twice", termtext.Line(key))
		}
		seen[key] = true
		value = unquote(value)
		switch key {
		case "name":
			m.Name = value
		case "description":
			m.Description = value
		default:
			return Manifest{}, manifestErr(DocFile, "unknown front matter field %q; only name and description are allowed", termtext.Line(key))
		}
	}
	if !closed {
		return Manifest{}, manifestErr(DocFile, `front matter is not closed by a line "---"`)
	}
	if !nameRe().MatchString(m.Name) {
		return Manifest{}, manifestErr(DocFile, "field name: %q must be lowercase letters, digits and hyphens, starting with a letter, at most 40", termtext.Line(m.Name))
	}
	switch n := utf8.RuneCountInString(m.Description); {
	case n == 0:
		return Manifest{}, manifestErr(DocFile, "field description: missing; one line saying what the skill does")
	case n > MaxDescription:
		return Manifest{}, manifestErr(DocFile, "field description: %d characters; the limit is %d", n, MaxDescription)
	case strings.ContainsFunc(m.Description, hidden):
		return Manifest{}, manifestErr(DocFile, "field description: holds control or invisible characters")
	}
	return m, nil
}

// unquote removes one pair of matching quotes around a front matter value.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

// hidden reports a character a person cannot see on a terminal.
func hidden(r rune) bool { return termtext.Hidden(r) || unicode.IsControl(r) }

// checkEntrypoint requires argv whose program is a file of the tree,
// written "./path", and whose arguments hold no NUL.
func checkEntrypoint(argv []string, files map[string][]byte) error {
	if len(argv) == 0 {
		return manifestErr(ManifestFile, `field entrypoint: empty; give the program and its fixed arguments, like ["./run.sh"]`)
	}
	prog := argv[0]
	rel, ok := strings.CutPrefix(prog, "./")
	if !ok || rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") || rel == ".." {
		return manifestErr(ManifestFile, "field entrypoint[0]: %q must be a file of the skill written ./PATH (no .., no absolute path)", termtext.Line(prog))
	}
	if _, ok := files[rel]; !ok {
		return manifestErr(ManifestFile, "field entrypoint[0]: %q is not a file of the skill", termtext.Line(prog))
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return manifestErr(ManifestFile, "field entrypoint[%d]: holds a NUL byte", i)
		}
	}
	return nil
}

var paramTypes = []string{"string", "integer", "number", "boolean"}

// parseParams checks the parameters schema: an object whose properties
// are scalars with a type, closed with additionalProperties false. The
// schema given to the validator is the one decoded here, re-encoded, so
// nothing the strict decoder did not see can reach it.
func parseParams(s schemaJSON) (Params, error) {
	if s.Type != "object" {
		return Params{}, manifestErr(ManifestFile, `field parameters.type: %q; it must be "object"`, termtext.Line(s.Type))
	}
	if s.AdditionalProperties == nil || *s.AdditionalProperties {
		return Params{}, manifestErr(ManifestFile, "field parameters.additionalProperties: must be false, so undeclared parameters are refused")
	}
	for name, p := range s.Properties {
		if !paramRe().MatchString(name) {
			return Params{}, manifestErr(ManifestFile, "field parameters.properties: name %q must be lowercase letters, digits and _, starting with a letter", termtext.Line(name))
		}
		if !slices.Contains(paramTypes, p.Type) {
			return Params{}, manifestErr(ManifestFile, "field parameters.properties.%s.type: %q; it must be one of %s", name, termtext.Line(p.Type), strings.Join(paramTypes, ", "))
		}
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return Params{}, manifestErr(ManifestFile, "field parameters.required: %q is not a declared property", termtext.Line(r))
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return Params{}, fmt.Errorf("encode parameters: %w", err)
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		return Params{}, manifestErr(ManifestFile, "parameters: %v", err)
	}
	res, err := js.Resolve(nil)
	if err != nil {
		return Params{}, manifestErr(ManifestFile, "parameters: %v", err)
	}
	return Params{Properties: s.Properties, Required: s.Required, resolved: res}, nil
}

// validHost reports whether h is a host the manifest's pattern accepts,
// with an optional ":port" (1-65535) as a vault binding may name one.
func validHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if hasPort {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || port[0] == '0' {
			return false
		}
	}
	return hostRe().MatchString(name)
}

// checkPerms validates declared roots, hosts and secrets.
func checkPerms(p Permissions) error {
	seen := map[string]bool{}
	for i, r := range p.Roots {
		if !rootRe().MatchString(r.Name) {
			return manifestErr(ManifestFile, "field permissions.roots[%d].name: %q is not a root name", i, termtext.Line(r.Name))
		}
		if r.Access != "ro" && r.Access != "rw" {
			return manifestErr(ManifestFile, `field permissions.roots[%d].access: %q; it must be "ro" or "rw"`, i, termtext.Line(r.Access))
		}
		if seen[r.Name] {
			return manifestErr(ManifestFile, "field permissions.roots[%d].name: root %q is declared twice", i, r.Name)
		}
		seen[r.Name] = true
		if r.Access == "rw" && slices.ContainsFunc(p.Roots[:i], func(o Root) bool { return o.Access == "rw" }) {
			// Its writes come back as one change set, graded and
			// applied under that root's lock.
			return manifestErr(ManifestFile, `field permissions.roots[%d]: a skill may write to one root; make the others "ro"`, i)
		}
	}
	clear(seen)
	for i, h := range p.Hosts {
		if !validHost(h) {
			return manifestErr(ManifestFile, "field permissions.hosts[%d]: %q is not a lowercase host name with an optional :port (no scheme, wildcard or path)", i, termtext.Line(h))
		}
		if seen[h] {
			return manifestErr(ManifestFile, "field permissions.hosts[%d]: host %q is declared twice", i, h)
		}
		seen[h] = true
	}
	clear(seen)
	for i, s := range p.Secrets {
		if !rootRe().MatchString(s) {
			return manifestErr(ManifestFile, "field permissions.secrets[%d]: %q is not a secret name", i, termtext.Line(s))
		}
		if seen[s] {
			return manifestErr(ManifestFile, "field permissions.secrets[%d]: secret %q is declared twice", i, s)
		}
		seen[s] = true
	}
	if len(p.Secrets) > 0 && len(p.Hosts) == 0 {
		return manifestErr(ManifestFile, "field permissions.secrets: a secret is only used on a request to a declared host; declare the hosts too")
	}
	return nil
}
