package workspace

import (
	"fmt"
	"path"
	"strings"
)

// DefaultSensitive are the patterns of files that hold credentials: the
// file tools neither read nor write them in any mode, grep skips them and
// listings mark them. A pattern is one or more slash-separated path.Match
// elements, matched case-insensitively (a workspace may sit on a
// case-insensitive file system) against every run of consecutive elements
// of a root-relative path: ".ssh" matches ".ssh", "home/.ssh" and
// "home/.ssh/config" (a match on a folder covers everything in it), and
// ".docker/config.json" matches "x/.docker/config.json". Private keys named
// the ssh-keygen way are matched by code rather than a pattern (see
// privateKeyName): "id_*" alone would also refuse id_test.go.
//
// .envrc is not here: it is not a secret but a file the owner's shell runs
// (direnv); it belongs to the list of files host tools execute.
var DefaultSensitive = []string{
	// Environment files holding tokens.
	".env", ".env.*",
	// Keys and certificates with their private half; key stores.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdbx",
	// Credential folders and files of common tools.
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh/hosts.yml",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".vault-token",
	".docker/config.json", ".kube/config", ".terraform.d/credentials.tfrc.json",
	// Keychains and password stores.
	"*.keychain", "*.keychain-db", "library/keychains", ".password-store",
	// Browser profiles: whole profile folders, and the files that hold
	// passwords and cookies wherever a profile was copied to.
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/bravesoftware",
	"login data", "login data for account", "cookies.sqlite", "logins.json", "key3.db", "key4.db",
	"default/cookies", "default/network/cookies", "profile */cookies", "profile */network/cookies",
}

// privateKeyPrefixes are the key types ssh-keygen names its files after.
var privateKeyPrefixes = []string{"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss"}

// privateKeyName reports whether the last element of rel (lowercase) is
// named like an ssh private key: "id_" followed by a name without an
// extension (id_rsa, id_work), or a known key type with any suffix
// (id_rsa.old, id_ed25519_sk), but never a public key (".pub"). It is kept
// to the last element so a folder such as id_generator/ is not swallowed.
func privateKeyName(elems []string) bool {
	name := elems[len(elems)-1]
	if !strings.HasPrefix(name, "id_") || strings.HasSuffix(name, ".pub") || name == "id_" {
		return false
	}
	if !strings.Contains(name, ".") {
		return true
	}
	for _, p := range privateKeyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// pattern is one sensitive pattern split into lowercase elements.
type pattern struct {
	text  string
	elems []string
}

func compilePatterns(list []string) ([]pattern, error) {
	out := make([]pattern, 0, len(list))
	for _, s := range list {
		low := strings.ToLower(s)
		if err := checkPattern(low); err != nil {
			return nil, fmt.Errorf("sensitive pattern %q: %w", s, err)
		}
		out = append(out, pattern{text: s, elems: strings.Split(low, "/")})
	}
	return out, nil
}

// checkPattern accepts what can match a clean relative path.
func checkPattern(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, `\`) {
		return fmt.Errorf("want a relative slash path such as \".secrets\" or \"*.token\", without a leading or trailing /")
	}
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			return fmt.Errorf("want no empty, \".\" or \"..\" elements")
		}
		if _, err := path.Match(e, ""); err != nil {
			return fmt.Errorf("element %q is not a valid pattern", e)
		}
	}
	return nil
}

var defaultPatterns = mustCompile(DefaultSensitive)

func mustCompile(list []string) []pattern {
	p, err := compilePatterns(list)
	if err != nil {
		panic(err)
	}
	return p
}

// Sensitive reports whether rel, a clean slash path relative to a
// workspace root, is a sensitive file by DefaultSensitive or the private-key
// rule: true if any run of its elements matches a pattern. It is pure (the
// caller resolves symlinks first) and ignores the owner's configured
// additions and allowances; (*Workspace).Sensitive honours them.
func Sensitive(rel string) bool {
	_, ok := sensitiveRule(defaultPatterns, nil, rel)
	return ok
}

// sensitiveRule returns the rule rel matches, first in defaults then in
// extra, and whether it matched.
func sensitiveRule(defaults, extra []pattern, rel string) (string, bool) {
	if rel == "" || rel == "." {
		return "", false
	}
	elems := strings.Split(strings.ToLower(rel), "/")
	if privateKeyName(elems) {
		return "id_* (a private key)", true
	}
	for _, list := range [][]pattern{defaults, extra} {
		for _, p := range list {
			if matchRun(p.elems, elems) {
				return p.text, true
			}
		}
	}
	return "", false
}

// matchRun reports whether pat matches some run of consecutive elements.
func matchRun(pat, elems []string) bool {
	for i := 0; i+len(pat) <= len(elems); i++ {
		ok := true
		for j, pe := range pat {
			if m, _ := path.Match(pe, elems[i+j]); !m {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// sensitivity is a workspace's sensitive-file rules: the defaults, the
// owner's additions (Options.Sensitive) and the paths the owner allowed
// (Options.AllowSensitive), per root. Immutable after Open.
type sensitivity struct {
	extra []pattern
	allow map[string][]string // root name → clean rel paths allowed, with everything under them
}

// rule returns the sensitive rule rel (real, relative to root) matches
// unless the owner allowed that path.
func (s *sensitivity) rule(root, rel string) (string, bool) {
	rule, ok := sensitiveRule(defaultPatterns, s.extra, rel)
	if !ok {
		return "", false
	}
	for _, a := range s.allow[root] {
		if rel == a || strings.HasPrefix(rel, a+"/") {
			return "", false
		}
	}
	return rule, true
}

// Sensitive reports whether rel (a clean slash path relative to root
// rootName, symlinks already resolved) is a sensitive file under the
// defaults and Options.Sensitive, and not allowed by Options.AllowSensitive.
// An unknown root gives false.
func (w *Workspace) Sensitive(rootName, rel string) bool {
	_, ok := w.sens.rule(rootName, rel)
	return ok
}

// sensitiveRefusal is the error for a tool touching a sensitive file.
func sensitiveRefusal(op string, p Path, real, rule string) error {
	via := ""
	if real != p.Rel {
		via = " (it resolves to " + real + ")"
	}
	return fmt.Errorf("%s %s%s: %w: it matches %q, a file that holds credentials, so tools never read or write it in any mode; if the owner wants tools to use this one file, they add %q to allow_sensitive under [files] in config.toml",
		op, p, via, ErrSensitive, rule, allowEntry(p, real))
}

// allowEntry is how config names real in p's root.
func allowEntry(p Path, real string) string {
	if p.inDefault {
		return real
	}
	return p.Root + ":" + real
}

// newSensitivity checks the owner's additions and allowances. allow
// entries are "rel" in the default root or "name:rel" in another.
func newSensitivity(extra, allow []string, roots []*root) (*sensitivity, error) {
	s := &sensitivity{allow: map[string][]string{}}
	var err error
	if s.extra, err = compilePatterns(extra); err != nil {
		return nil, err
	}
	for _, a := range allow {
		name, rel := roots[0].name, a
		if n, r, ok := strings.Cut(a, ":"); ok {
			name, rel = n, r
		}
		known := false
		for _, r := range roots {
			known = known || r.name == name
		}
		if !known {
			return nil, fmt.Errorf("allowed sensitive path %q: no workspace root is named %q", a, name)
		}
		if err := checkRel(rel); err != nil || rel == "." {
			return nil, fmt.Errorf("allowed sensitive path %q: want a clean path relative to the root, such as \"config/.env\"", a)
		}
		// Kept as written and compared exactly: allowing ".ENV" must not
		// also allow ".env" where the file system tells them apart.
		s.allow[name] = append(s.allow[name], rel)
	}
	return s, nil
}
