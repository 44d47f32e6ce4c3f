package skill

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// maxSafeInt is the largest integer a float64 holds exactly.
const maxSafeInt = 1 << 53

// CheckArgs validates args against the declared parameters and returns
// them normalised: strings, float64 numbers and booleans, nothing else.
// Undeclared parameters are refused with the declared ones listed.
func (p Params) CheckArgs(args map[string]any) (map[string]any, error) {
	norm := make(map[string]any, len(args))
	for name, v := range args {
		decl, ok := p.Properties[name]
		if !ok {
			return nil, fmt.Errorf("%w: parameter %q is not declared; this skill takes %s", ErrArgs, name, p.names())
		}
		switch x := v.(type) {
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, fmt.Errorf("%w: parameter %s: %v", ErrArgs, name, err)
			}
			v = f
		case string:
			if strings.IndexByte(x, 0) >= 0 {
				return nil, fmt.Errorf("%w: parameter %s holds a NUL byte", ErrArgs, name)
			}
		}
		if f, ok := v.(float64); ok && decl.Type == "integer" && math.Abs(f) > maxSafeInt {
			return nil, fmt.Errorf("%w: parameter %s: %v is beyond ±2^53", ErrArgs, name, f)
		}
		norm[name] = v
	}
	if p.resolved == nil {
		return nil, fmt.Errorf("%w: the skill's parameters were not parsed", ErrArgs)
	}
	if err := p.resolved.Validate(norm); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArgs, err)
	}
	return norm, nil
}

func (p Params) names() string {
	if len(p.Properties) == 0 {
		return "no parameters"
	}
	names := make([]string, 0, len(p.Properties))
	for n := range p.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Argv builds the command line for checked args: the entrypoint, then
// "--name=value" for each given parameter in name order. The value is
// glued to its name, so no value can pass for an option; integers are
// written without a fraction, other numbers in Go's shortest form,
// booleans as true or false.
func (m Manifest) Argv(args map[string]any) ([]string, error) {
	argv := slices.Clone(m.Entrypoint)
	names := make([]string, 0, len(args))
	for n := range args {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		var s string
		switch v := args[n].(type) {
		case string:
			s = v
		case bool:
			s = strconv.FormatBool(v)
		case float64:
			if m.Params.Properties[n].Type == "integer" {
				s = strconv.FormatInt(int64(v), 10)
			} else {
				s = strconv.FormatFloat(v, 'g', -1, 64)
			}
		default:
			return nil, fmt.Errorf("%w: parameter %s has a %T value", ErrArgs, n, v)
		}
		argv = append(argv, "--"+n+"="+s)
	}
	return argv, nil
}

// Env is what this homard can grant: its workspace roots (name →
// writable) and its vault's secrets (name → the hosts each is bound to).
type Env struct {
	Roots   map[string]bool
	Secrets map[string][]string
}

// Invocation is one run of a skill, for the runner: the installed folder
// (to mount read-only), the argv (Argv[0] is "./PATH" inside Dir) and
// exactly the declared permissions. The runner gives it nothing else.
type Invocation struct {
	Skill   string
	Hash    string
	Dir     string
	Argv    []string
	Roots   []Root
	Hosts   []string
	Secrets []string
}

// Grant checks the declared permissions against env and returns the
// invocation for argv. A declared root that is not a workspace root, a
// read-write root that is read-only, or a secret that is missing or bound
// to none of the declared hosts is refused before anything runs.
func (s Skill) Grant(env Env, argv []string) (Invocation, error) {
	for _, r := range s.Perms.Roots {
		writable, ok := env.Roots[r.Name]
		if !ok {
			return Invocation{}, fmt.Errorf("%w: skill %s asks for root %q, which is not a workspace root; add it to workspace.roots or change skill.json", ErrPermission, s.Name, r.Name)
		}
		if r.Access == "rw" && !writable {
			return Invocation{}, fmt.Errorf("%w: skill %s asks to write root %q, which is read-only", ErrPermission, s.Name, r.Name)
		}
	}
	for _, name := range s.Perms.Secrets {
		hosts, ok := env.Secrets[name]
		if !ok {
			return Invocation{}, fmt.Errorf("%w: skill %s uses secret %q, which is not in the vault; add it with `homard secret set %s --host HOST`", ErrPermission, s.Name, name, name)
		}
		if !slices.ContainsFunc(hosts, func(h string) bool { return slices.Contains(s.Perms.Hosts, h) }) {
			return Invocation{}, fmt.Errorf("%w: skill %s uses secret %q, which is bound to none of its hosts (%s)", ErrPermission, s.Name, name, strings.Join(s.Perms.Hosts, ", "))
		}
	}
	return Invocation{
		Skill: s.Name, Hash: s.Hash, Dir: s.Dir, Argv: slices.Clone(argv),
		Roots: slices.Clone(s.Perms.Roots), Hosts: slices.Clone(s.Perms.Hosts), Secrets: slices.Clone(s.Perms.Secrets),
	}, nil
}
