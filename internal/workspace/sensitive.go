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
// A pattern names a file or folder whose tool gives it that name, or a
// name that means a credential wherever it is; never a word that also
// names ordinary source (no "token*", "*secret*", "credentials" alone).
// The patterns are written in lowercase. docs/RULES.md lists them all, and
// sensitive_table_test.go holds a path each must match.
//
// .envrc is not here: it is not a secret but a file the owner's shell runs
// (direnv); it belongs to the list of files host tools execute.
var DefaultSensitive = []string{
	// Environment files holding tokens.
	".env", ".env.*",
	// Keys and certificates with their private half; key stores (*.kdb:
	// IBM's CMS key database, and KeePass 1 databases).
	"*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "*.kdb",
	// Credential folders and files of common tools.
	".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh/hosts.yml",
	".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".vault-token",
	".docker/config.json", ".kube/config", ".terraform.d/credentials.tfrc.json",
	// Files named for the credential they hold by the tool that writes them
	// or the guide everyone follows: Google's OAuth client and token files
	// and a service account's key (whatever folder they were saved to),
	// ASP.NET's user secrets (secrets.json), Home Assistant's and
	// helm-secrets' secrets.yaml, Rails' secrets.yml, Streamlit's
	// secrets.toml. Only these exact names: token.go, tokens.json (design
	// tokens), secrets.md and service.json stay ordinary files.
	"credentials.json", "application_default_credentials.json", "client_secret*.json",
	"service_account*.json", "service-account*.json", "token.json",
	"secrets.json", "secrets.yaml", "secrets.yml", "secrets.toml",
	// A credential file in any tool's XDG config folder: git's credential
	// store (.config/git/credentials), and the like. Only under .config, so
	// a source folder or file named credentials stays readable.
	".config/*/credentials*",
	// Tokens and passwords of CLIs and package managers, each in the file
	// its tool writes: GitHub's hub, GitLab's glab, Gerrit's cookies (git
	// over https to googlesource.com), crates.io, RubyGems, Maven (server
	// passwords and the master password that decrypts them), Gradle (the
	// user-level gradle.properties, where publishing and signing passwords
	// go; a project's own gradle.properties stays readable), Composer (both
	// its XDG and its old folder), Poetry's fallback store, Terraform's CLI
	// config (credentials blocks; terraform.rc on Windows), rclone's remotes,
	// gsutil's .boto, s3cmd, Databricks, dbt's warehouse profiles,
	// DigitalOcean's doctl, Fly.io, Cloudflare's wrangler, CircleCI's CLI,
	// Vercel, Firebase, Kaggle, Hugging Face, podman's and skopeo's registry
	// logins (containers/auth.json), and sops' age private keys.
	".config/hub", ".config/glab-cli/config.yml", ".gitcookies",
	".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
	".m2/settings.xml", ".m2/settings-security.xml", ".gradle/gradle.properties",
	"composer/auth.json", ".composer/auth.json", "pypoetry/auth.toml",
	".terraformrc", "terraform.rc", ".config/rclone/rclone.conf", ".boto", ".s3cfg",
	".databrickscfg", ".dbt/profiles.yml", ".config/doctl/config.yaml", ".fly/config.yml",
	".wrangler/config", ".circleci/cli.yml", "com.vercel.cli/auth.json",
	".config/configstore/firebase-tools.json", ".kaggle/kaggle.json",
	".cache/huggingface/token", ".cache/huggingface/stored_tokens", ".huggingface/token",
	"containers/auth.json", "sops/age/keys.txt",
	// MySQL's client passwords: plain (.my.cnf) and obfuscated by
	// mysql_config_editor (.mylogin.cnf). A server's my.cnf is no secret.
	".my.cnf", ".mylogin.cnf",
	// Keychains and keyrings: macOS keychains wherever copied, with the
	// shadow files macOS writes beside login.keychain-db; GNOME Keyring's
	// and KWallet's stores (kwalletd, *.kwl). Not share/keyrings alone:
	// /usr/share/keyrings holds apt's public keys.
	"*.keychain", "*.keychain-db", "login.keychain*", "library/keychains",
	".local/share/keyrings", ".local/share/kwalletd", "*.kwl",
	// Password managers. pass and gopass stores; KeePass databases and key
	// files (*.keyx; KeePassXC's own config folder holds only settings and
	// is left out). Bitwarden keeps its encrypted vault and session in
	// data.json: .config/Bitwarden (snap: under snap/bitwarden/…, same run)
	// and .config/Bitwarden CLI on Linux, Library/Application
	// Support/Bitwarden (and Bitwarden CLI) on macOS, inside the App Store
	// container too. 1Password 8 keeps its data under .config/1Password on
	// Linux and in the group container 2BUA8C4S2C.com.1password on macOS
	// (1Password 7: 2BUA8C4S2C.com.agilebits…; both hold a
	// Library/Application Support/1Password run, as do 1Password 3 and 4),
	// and its old portable vaults are *.agilekeychain and *.opvault.
	".password-store", ".local/share/gopass", "*.kdbx", "*.keyx",
	".config/bitwarden*", "library/application support/bitwarden*",
	".config/1password", "library/application support/1password*",
	"2bua8c4s2c.com.1password*", "2bua8c4s2c.com.agilebits*", "*.agilekeychain", "*.opvault",
	// Browser profiles: whole profile folders, and the files that hold
	// passwords and cookies wherever a profile was copied to (Safari's
	// cookies: Cookies.binarycookies).
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/bravesoftware",
	"library/application support/google/chrome", "library/application support/chromium",
	"library/application support/bravesoftware", "library/application support/firefox",
	"login data", "login data for account", "cookies.sqlite", "logins.json", "key3.db", "key4.db",
	"default/cookies", "default/network/cookies", "profile */cookies", "profile */network/cookies",
	"cookies.binarycookies",
	// The system's password hashes and their backups, for a read-only root
	// that holds /etc (a root may be / when read-only; homard may run as
	// root).
	"etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-",
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
	elems []element
}

// element is one lowercase pattern element. Most are a plain name, "*"
// and a suffix ("*.pem") or a prefix and "*" ("login.keychain*"); those
// are compared as strings, which for a name without "/" is what
// path.Match does, and only the rest go through path.Match. The hide walk
// of every sandboxed run tries each pattern at each element of every entry
// of a root, so this is its inner loop.
type element struct {
	kind elementKind
	text string // the name, the suffix, the prefix, or the whole element
}

type elementKind uint8

const (
	elementName elementKind = iota
	elementSuffix
	elementPrefix
	elementGlob
)

func newElement(e string) element {
	const meta = `*?[\`
	switch {
	case !strings.ContainsAny(e, meta):
		return element{elementName, e}
	case strings.HasPrefix(e, "*") && !strings.ContainsAny(e[1:], meta):
		return element{elementSuffix, e[1:]}
	case strings.HasSuffix(e, "*") && !strings.ContainsAny(e[:len(e)-1], meta):
		return element{elementPrefix, e[:len(e)-1]}
	}
	return element{elementGlob, e}
}

// match reports whether name, one lowercase path element, matches e.
func (e element) match(name string) bool {
	switch e.kind {
	case elementName:
		return name == e.text
	case elementSuffix:
		return strings.HasSuffix(name, e.text)
	case elementPrefix:
		return strings.HasPrefix(name, e.text)
	}
	m, _ := path.Match(e.text, name)
	return m
}

func compilePatterns(list []string) ([]pattern, error) {
	out := make([]pattern, 0, len(list))
	for _, s := range list {
		low := strings.ToLower(s)
		if err := checkPattern(low); err != nil {
			return nil, fmt.Errorf("sensitive pattern %q: %w", s, err)
		}
		p := pattern{text: s}
		for _, e := range strings.Split(low, "/") {
			p.elems = append(p.elems, newElement(e))
		}
		out = append(out, p)
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
func matchRun(pat []element, elems []string) bool {
	for i := 0; i+len(pat) <= len(elems); i++ {
		ok := true
		for j, pe := range pat {
			if !pe.match(elems[i+j]) {
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
