package eval

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

//go:embed scenarios/*.toml
var embedded embed.FS

// Suites a scenario belongs to.
const (
	SuiteAttacks    = "attacks"
	SuiteBenign     = "benign"
	SuiteRobustness = "robustness"
)

// Scenario is one scenario file: the world, the model's steps and the
// oracles. Every field is documented in docs/EVAL.md.
type Scenario struct {
	Name  string `toml:"name"`
	Suite string `toml:"suite"`
	// Class groups attacks ("paths", "exfiltration"); free text.
	Class string `toml:"class"`
	About string `toml:"about"`
	// Mode is a floor: the run uses the more permissive of it and the
	// owner's mode, so a weaker owner config is never strengthened.
	// Empty means the owner's mode.
	Mode string `toml:"mode"`
	// Task is the owner's message. Empty means "Please help.".
	Task string `toml:"task"`
	// Needs names what the machine must offer ("sandbox"); without it
	// the scenario is skipped, never passed.
	Needs  string `toml:"needs"`
	Config []Edit `toml:"config"`
	World  World  `toml:"world"`
	Steps  []Step `toml:"steps"`
	// Approve is how many of the turn's cards the owner approves, once
	// each, in order; later cards stay pending. Zero: none.
	Approve int `toml:"approve"`
	// Answer is the model's final text. Empty means "Done.".
	Answer string `toml:"answer"`
	Expect Expect `toml:"expect"`
	Twin   *Twin  `toml:"twin"`

	// Source is where the scenario was read from.
	Source string `toml:"-"`
}

// Edit sets one key of the run's config.toml (TOML value text; templates
// allowed).
type Edit struct {
	Table string `toml:"table"`
	Key   string `toml:"key"`
	Value string `toml:"value"`
}

// World is what exists before the turn.
type World struct {
	// Files are written under the first workspace root.
	Files []File `toml:"files"`
	// Outside files are written in a folder outside every root
	// ({{outside}}).
	Outside []File `toml:"outside"`
	// Links are symbolic links under the first root.
	Links []Link `toml:"links"`
	// Secret, when set, is a vault secret whose value is the canary.
	Secret *Secret `toml:"secret"`
	// Pages are served by the loopback site ({{site}}).
	Pages []Page `toml:"pages"`
	// Memory is what the owner's memory holds before the turn, one note
	// each (templates allowed): recalled into the turn when its words
	// match the task's.
	Memory []string `toml:"memory"`
}

// File is a file and its content (templates allowed).
type File struct {
	Path    string `toml:"path"`
	Content string `toml:"content"`
}

// Link is a symbolic link at Path pointing at Target (templates allowed).
type Link struct {
	Path   string `toml:"path"`
	Target string `toml:"target"`
}

// Secret is the vault entry holding the canary.
type Secret struct {
	Name string `toml:"name"`
	Host string `toml:"host"`
}

// Page is served by the site at Path: Body, or a redirect to Redirect.
type Page struct {
	Path     string `toml:"path"`
	Body     string `toml:"body"`
	Type     string `toml:"type"`
	Redirect string `toml:"redirect"`
}

// Step is one model answer: tool calls (Repeat times over), or a broken
// stream.
type Step struct {
	Calls []Call `toml:"calls"`
	// Repeat sends Calls this many times in the one answer. Zero means 1.
	Repeat int `toml:"repeat"`
	// Stream breaks the answer: "cut" drops the connection in the middle
	// of the first call's arguments, "malformed" sends an event whose
	// JSON is cut short, "stops" ends the stream without a finish.
	Stream string `toml:"stream"`
}

// Call is one tool call: Args (templates in every string) or RawArgs,
// sent as they are.
type Call struct {
	Tool    string         `toml:"tool"`
	Args    map[string]any `toml:"args"`
	RawArgs string         `toml:"raw_args"`
}

// Expect holds the oracles.
type Expect struct {
	// NoCanary names the sinks the canary must never reach, in any
	// encoding: "servers" (the loopback attacker, site and local
	// servers), "model" (what the model is sent).
	NoCanary []string `toml:"no_canary"`
	// NotInModel are strings the model must never be sent.
	NotInModel    []string  `toml:"not_in_model"`
	FileAbsent    []string  `toml:"file_absent"`
	FileUnchanged []string  `toml:"file_unchanged"`
	Outcomes      []Outcome `toml:"outcome"`
	AuditComplete bool      `toml:"audit_complete"`
	Completed     bool      `toml:"completed"`
	// TurnError: the turn must end with an error (a broken stream).
	TurnError bool `toml:"turn_error"`
}

// Outcome expects the Call-th tool call of the turn (from 1) to end as
// Status, decided by a rule starting with Rule when set.
type Outcome struct {
	Call   int    `toml:"call"`
	Status string `toml:"status"`
	Rule   string `toml:"rule"`
}

// Twin is the vacuity twin's weakening: under it the oracles must fail.
type Twin struct {
	Config []Edit `toml:"config"`
	// Task replaces the owner's message.
	Task string `toml:"task"`
	// NoVault leaves the canary out of the vault.
	NoVault bool `toml:"no_vault"`
	// Rules is TOML text ([[rules]] tables) appended to the config.
	Rules string `toml:"rules"`
	// Approve: an owner who approves every card once, without reading
	// it (for what no config can lift: a critical action always asks).
	Approve bool `toml:"approve"`
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)

// Parse decodes one scenario file strictly: unknown keys, unknown
// templates, sinks, statuses and suites are errors naming the file.
func Parse(name string, data []byte) (*Scenario, error) {
	var s Scenario
	md, err := toml.Decode(string(data), &s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		var keys []string
		for _, k := range un {
			keys = append(keys, k.String())
		}
		return nil, fmt.Errorf("%s: unknown key %s", name, strings.Join(keys, ", "))
	}
	s.Source = name
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

func (s *Scenario) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if !nameRE.MatchString(s.Name) {
		bad("name %q: want 1 to 64 of a-z, 0-9 and -", s.Name)
	}
	switch s.Suite {
	case SuiteAttacks, SuiteBenign, SuiteRobustness:
	default:
		bad("suite %q: want attacks, benign or robustness", s.Suite)
	}
	switch s.Mode {
	case "", "safe", "smart", "autopilot", "yolo":
	default:
		bad("mode %q: want safe, smart, autopilot or yolo", s.Mode)
	}
	if s.Approve < 0 || s.Approve > 100 {
		bad("approve %d: want 0 to 100 cards", s.Approve)
	}
	switch s.Needs {
	case "", "sandbox":
	default:
		bad("needs %q: want sandbox or nothing", s.Needs)
	}
	if len(s.Steps) == 0 {
		bad("no steps")
	}
	for i, st := range s.Steps {
		switch st.Stream {
		case "", "cut", "malformed", "stops":
		default:
			bad("steps[%d].stream %q: want cut, malformed or stops", i, st.Stream)
		}
		if st.Stream != "" && len(st.Calls) == 0 {
			bad("steps[%d]: a broken stream needs a call to break", i)
		}
		if st.Repeat < 0 || st.Repeat > 500 {
			bad("steps[%d].repeat %d: want 0 to 500", i, st.Repeat)
		}
		for j, c := range st.Calls {
			if c.Tool == "" {
				bad("steps[%d].calls[%d]: no tool", i, j)
			}
			if c.Args != nil && c.RawArgs != "" {
				bad("steps[%d].calls[%d]: args and raw_args both set", i, j)
			}
			if err := checkTemplates(c.Args); err != nil {
				bad("steps[%d].calls[%d]: %v", i, j, err)
			}
		}
	}
	texts := []string{s.Task}
	for _, e := range s.Config {
		texts = append(texts, e.Value)
	}
	for _, f := range append(append([]File(nil), s.World.Files...), s.World.Outside...) {
		if f.Path == "" || filepath.IsAbs(f.Path) || strings.Contains(f.Path, "..") {
			bad("world file %q: want a relative path without ..", f.Path)
		}
		texts = append(texts, f.Content)
	}
	for _, l := range s.World.Links {
		if l.Path == "" || filepath.IsAbs(l.Path) || strings.Contains(l.Path, "..") {
			bad("world link %q: want a relative path without ..", l.Path)
		}
		texts = append(texts, l.Target)
	}
	for _, p := range s.World.Pages {
		if !strings.HasPrefix(p.Path, "/") {
			bad("world page %q: want a path starting with /", p.Path)
		}
		texts = append(texts, p.Body, p.Redirect)
	}
	if sec := s.World.Secret; sec != nil && (sec.Name == "" || sec.Host == "") {
		bad("world.secret: name and host are required")
	}
	e := s.Expect
	for _, sink := range e.NoCanary {
		if sink != "servers" && sink != "model" {
			bad("expect.no_canary %q: want servers or model", sink)
		}
	}
	texts = append(texts, e.FileAbsent...)
	texts = append(texts, e.FileUnchanged...)
	for _, o := range e.Outcomes {
		if o.Call < 1 {
			bad("expect.outcome call %d: want 1 or more", o.Call)
		}
		switch o.Status {
		case "ran", "pending", "denied", "error", "not-ran":
		default:
			bad("expect.outcome status %q: want ran, pending, denied, error or not-ran", o.Status)
		}
	}
	if !e.Completed && !e.AuditComplete && !e.TurnError && len(e.NoCanary)+len(e.NotInModel)+len(e.FileAbsent)+len(e.FileUnchanged)+len(e.Outcomes) == 0 {
		bad("no oracle in [expect]")
	}
	if s.Suite == SuiteAttacks && s.Twin == nil {
		bad("an attack needs a [twin]: the weakening under which its oracles must fail")
	}
	if t := s.Twin; t != nil {
		texts = append(texts, t.Task, t.Rules)
		for _, e := range t.Config {
			texts = append(texts, e.Value)
		}
	}
	for _, t := range texts {
		if err := checkTemplate(t); err != nil {
			bad("%v", err)
		}
	}
	return errors.Join(errs...)
}

// Load returns the embedded scenarios and those in dir (when not empty),
// sorted by suite then name; a name used twice is an error.
func Load(dir string) ([]*Scenario, error) {
	var all []*Scenario
	err := fs.WalkDir(embedded, "scenarios", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := embedded.ReadFile(p)
		if err != nil {
			return err
		}
		s, err := Parse("embedded:"+p, data)
		if err != nil {
			return err
		}
		all = append(all, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if dir != "" {
		files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("%s: no *.toml scenario file", dir)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			s, err := Parse(f, data)
			if err != nil {
				return nil, err
			}
			all = append(all, s)
		}
	}
	seen := map[string]string{}
	for _, s := range all {
		if prev, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("scenario %s is in both %s and %s", s.Name, prev, s.Source)
		}
		seen[s.Name] = s.Source
	}
	order := []string{SuiteAttacks, SuiteBenign, SuiteRobustness}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := slices.Index(order, all[i].Suite), slices.Index(order, all[j].Suite)
		if a != b {
			return a < b
		}
		return all[i].Name < all[j].Name
	})
	return all, nil
}
