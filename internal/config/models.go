package config

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Roles a model can play, in the order [models.roles] lists them.
const (
	RoleMain    = "main"    // owner and guest turns, scheduled task runs
	RolePlanner = "planner" // the planner of the planner/worker split (issue 23 point 2); no user yet
	RoleWorker  = "worker"  // the workers of that split; no user yet
	RoleCapture = "capture" // memory capture (a call without tools over the owner's turns)
	RoleSummary = "summary" // the conversation summary made when old turns are folded
)

// MainModel is the model name of [model]; every role's default. It and
// "roles" cannot name a [models.NAME] table.
const MainModel = "main"

// RoleNames lists the roles in order.
func RoleNames() []string {
	return []string{RoleMain, RolePlanner, RoleWorker, RoleCapture, RoleSummary}
}

// Models names further models besides [model] and says which model plays
// each role. In the file each further model is a [models.NAME] table with
// the keys of [model]; [models.roles] is the role table.
type Models struct {
	// Roles says which model plays each role. Missing means every role is
	// played by [model].
	Roles Roles `toml:"roles"`
	// Named are the [models.NAME] tables by NAME ([a-z0-9_-]+, neither
	// "main" nor "roles"), each validated and completed like [model].
	// Missing means none; after Load it is never nil.
	Named map[string]Model `toml:"-"`
}

// Roles maps each role to a model name: "main" ([model]) or the NAME of a
// [models.NAME] table. Every field missing means "main"; written empty it
// is an error.
type Roles struct {
	// Main plays owner and guest turns and scheduled task runs.
	Main string `toml:"main"`
	// Planner will plan the planner/worker split (issue 23 point 2);
	// accepted and checked, used by nothing yet.
	Planner string `toml:"planner"`
	// Worker will run that split's items; accepted and checked, used by
	// nothing yet.
	Worker string `toml:"worker"`
	// Capture makes the memory capture calls.
	Capture string `toml:"capture"`
	// Summary writes the conversation summary when old turns are folded.
	// Its requests are as large as the main model's context_tokens allows.
	Summary string `toml:"summary"`
}

// Of returns the model name of role ("main" for an unknown role).
func (r Roles) Of(role string) string {
	var n string
	switch role {
	case RolePlanner:
		n = r.Planner
	case RoleWorker:
		n = r.Worker
	case RoleCapture:
		n = r.Capture
	case RoleSummary:
		n = r.Summary
	default:
		n = r.Main
	}
	if n == "" {
		return MainModel
	}
	return n
}

// ModelFor returns the name and settings of the model that plays role:
// "main" and [model] unless [models.roles] names another.
func (c *Config) ModelFor(role string) (string, Model) {
	name := c.Models.Roles.Of(role)
	if m, ok := c.Models.Named[name]; ok && name != MainModel {
		return name, m
	}
	return MainModel, c.Model
}

// RolesLine describes the roles not played by [model], for `homard doctor`:
// "capture → local (ollama qwen2.5:3b), summary → local"; each model's
// provider and name are given at its first mention. Empty when every role is
// the main model's.
func (c *Config) RolesLine() string {
	var parts []string
	told := map[string]bool{}
	for _, role := range RoleNames() {
		name, m := c.ModelFor(role)
		if name == MainModel {
			continue
		}
		p := role + " → " + name
		if !told[name] {
			p += " (" + m.Provider + " " + m.Name + ")"
			told[name] = true
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}

// applyModelLimits fills the provider-independent defaults of a model's
// context size and timeouts. Load then gives a file that leaves
// context_tokens out its provider's size (presetContext).
func applyModelLimits(m *Model) {
	orDefault(&m.ContextTokens, DefaultContextTokens)
	orDefault(&m.FirstEventTimeout, Duration(180*time.Second))
	orDefault(&m.IdleTimeout, Duration(90*time.Second))
	orDefault(&m.RequestTimeout, Duration(10*time.Minute))
	orDefault(&m.ConnectTimeout, Duration(30*time.Second))
}

func applyModelsDefaults(ms *Models) {
	r := &ms.Roles
	for _, p := range []*string{&r.Main, &r.Planner, &r.Worker, &r.Capture, &r.Summary} {
		orDefault(p, MainModel)
	}
	if ms.Named == nil {
		ms.Named = map[string]Model{}
	}
}

// decodeModels decodes the [models.*] tables parse left as primitives:
// [models.roles] into c.Models.Roles, every other into a Model completed
// like [model]. Decoding through md marks the keys it reads, so unknown
// keys are still found.
func decodeModels(md toml.MetaData, raw map[string]toml.Primitive, c *Config, ps *problems) error {
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		if md.Type("models", name) != "Hash" {
			ps.add("models.%s is not a table: want [models.%s] with the keys of [model], or [models.roles]", name, name)
			continue
		}
		if name == "roles" {
			if err := md.PrimitiveDecode(raw[name], &c.Models.Roles); err != nil {
				return err
			}
			continue
		}
		var m Model
		applyModelLimits(&m)
		if err := md.PrimitiveDecode(raw[name], &m); err != nil {
			return err
		}
		applyModelDefaults(&m)
		if !md.IsDefined("models", name, "context_tokens") {
			presetContext(&m)
		}
		c.Models.Named[name] = m
	}
	return nil
}

func validateModels(c *Config, ps *problems) {
	for _, name := range slices.Sorted(maps.Keys(c.Models.Named)) {
		key := "models." + name
		switch {
		case name == MainModel:
			ps.add("[%s]: %q is reserved for [model], the main model; give this model another name", key, name)
		case !rootNameRE().MatchString(name):
			ps.add("[%s]: want a model name made of a-z, 0-9, _ and -", key)
		}
		m := c.Models.Named[name]
		validateModel(key, &m, ps)
	}
	r := c.Models.Roles
	for i, n := range []string{r.Main, r.Planner, r.Worker, r.Capture, r.Summary} {
		role := RoleNames()[i]
		if _, ok := c.Models.Named[n]; n == MainModel || (ok && n != "") {
			continue
		}
		if n == "" {
			ps.add("models.roles.%s is empty: want \"main\" ([model]) or the NAME of a [models.NAME] table", role)
			continue
		}
		if n == "roles" {
			ps.add("models.roles.%s = \"roles\": that is the name of the role table, not of a model; write \"main\" or the NAME of a [models.NAME] table", role)
			continue
		}
		ps.add("models.roles.%s = %q: no [models.%s] table defines that model: add one (provider, name... as in [model]) or write \"main\"", role, n, n)
	}
}

// renderModels writes [models.roles] and every [models.NAME] table.
func renderModels(w func(string, ...any), ms *Models) {
	r := ms.Roles
	w(`
[models.roles]
# Which model plays each role: "main" is [model] above; another name is a
# [models.NAME] table with the same keys as [model] (provider, base_url,
# name, api_key_env...), such as a cheap local model for capture and summary.
# Owner and guest turns, scheduled task runs.
main = %s
# The planner of the planner/worker split (not used yet).
planner = %s
# The workers of the planner/worker split (not used yet).
worker = %s
# Memory capture: the call without tools that reads your turns for notes.
capture = %s
# The summary written when old turns are folded out of the context; its
# requests are as large as the main model's context_tokens.
summary = %s
`, quote(r.Main), quote(r.Planner), quote(r.Worker), quote(r.Capture), quote(r.Summary))
	for _, name := range slices.Sorted(maps.Keys(ms.Named)) {
		w("\n[models.%s]\n", name)
		renderModelKeys(w, ms.Named[name])
	}
}

// renderModelKeys writes a model's keys, each with a comment.
func renderModelKeys(w func(string, ...any), m Model) {
	w(`# "openai", "anthropic" or a preset such as "ollama", as in [model].
provider = %s
# Absolute http or https URL of the API, without credentials.
base_url = %s
# Model name sent to the API.
name = %s
# Name of the environment variable holding the API key (A-Z, 0-9 and _);
# "" for a local server that needs none. Never put the key itself here.
api_key_env = %s
# Or a vault secret holding the key (homard secret set NAME --host HOST,
# HOST as in base_url): released only to base_url's host.
api_key_secret = %s
# Cap on the estimated tokens of one request, at least 4000.
context_tokens = %d
# How long to wait for the first streamed event of an answer.
first_event_timeout = %s
# The longest silence in the middle of an answer (positive duration).
idle_timeout = %s
# The longest one whole request may take, answer included ("0s": no limit).
request_timeout = %s
# How long to wait for a connection to base_url (positive duration).
connect_timeout = %s
`, quote(m.Provider), quote(m.BaseURL), quote(m.Name), quote(m.APIKeyEnv), quote(m.APIKeySecret), m.ContextTokens,
		quote(m.FirstEventTimeout.String()), quote(m.IdleTimeout.String()), quote(m.RequestTimeout.String()), quote(m.ConnectTimeout.String()))
}
