package workspace

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sensitiveExamples holds, for every pattern of DefaultSensitive, paths
// (relative to a workspace root, often a read-only home folder) that this
// very pattern must match. TestSensitiveTable fails when a pattern has no
// entry here, so no pattern is added without a path showing what it is for.
var sensitiveExamples = map[string][]string{
	".env":       {".env", "app/.env"},
	".env.*":     {".env.local", "app/.env.production"},
	"*.pem":      {"server.pem", "tls/server.PEM"},
	"*.key":      {"tls/server.key", "private.key"},
	"*.p12":      {"identity.p12"},
	"*.pfx":      {"identity.pfx"},
	"*.jks":      {"truststore.jks"},
	"*.keystore": {"android/release.keystore"},
	"*.ppk":      {"putty/work.ppk"},
	"*.kdb":      {"gsk/key.kdb", "old/Passwords.kdb"},

	".ssh":                               {".ssh", ".ssh/config", "home/me/.ssh/id_work"},
	".gnupg":                             {".gnupg/pubring.kbx", ".gnupg/private-keys-v1.d/ABC.key"},
	".aws":                               {".aws/credentials", ".aws/sso/cache/x.json"},
	".azure":                             {".azure/msal_token_cache.json"},
	".config/gcloud":                     {".config/gcloud/credentials.db", ".config/gcloud/access_tokens.db"},
	".config/gh/hosts.yml":               {".config/gh/hosts.yml"},
	".netrc":                             {".netrc"},
	"_netrc":                             {"_netrc"},
	".npmrc":                             {".npmrc", "web/.npmrc"},
	".pypirc":                            {".pypirc"},
	".git-credentials":                   {".git-credentials"},
	".pgpass":                            {".pgpass"},
	".vault-token":                       {".vault-token"},
	".docker/config.json":                {".docker/config.json"},
	".kube/config":                       {".kube/config"},
	".terraform.d/credentials.tfrc.json": {".terraform.d/credentials.tfrc.json"},

	"credentials.json":                     {"credentials.json", "scripts/google/credentials.json", ".pulumi/credentials.json"},
	"application_default_credentials.json": {"ci/application_default_credentials.json"},
	"client_secret*.json":                  {"client_secret.json", "client_secret_1234-abc.apps.googleusercontent.com.json"},
	"service_account*.json":                {"service_account.json", "keys/service_account_prod.json"},
	"service-account*.json":                {"service-account.json", "deploy/service-account-key.json"},
	"token.json":                           {"token.json", "gmail/token.json"},
	"secrets.json":                         {"secrets.json", ".microsoft/usersecrets/0a1b2c/secrets.json"},
	"secrets.yaml":                         {"secrets.yaml", "homeassistant/secrets.yaml"},
	"secrets.yml":                          {"config/secrets.yml"},
	"secrets.toml":                         {".streamlit/secrets.toml"},
	".config/*/credentials*":               {".config/git/credentials", ".config/sometool/credentials.toml"},

	".config/hub":                             {".config/hub"},
	".config/glab-cli/config.yml":             {".config/glab-cli/config.yml"},
	".gitcookies":                             {".gitcookies"},
	".cargo/credentials":                      {".cargo/credentials"},
	".cargo/credentials.toml":                 {".cargo/credentials.toml"},
	".gem/credentials":                        {".gem/credentials"},
	".m2/settings.xml":                        {".m2/settings.xml"},
	".m2/settings-security.xml":               {".m2/settings-security.xml"},
	".gradle/gradle.properties":               {".gradle/gradle.properties"},
	"composer/auth.json":                      {".config/composer/auth.json"},
	".composer/auth.json":                     {".composer/auth.json"},
	"pypoetry/auth.toml":                      {".config/pypoetry/auth.toml", "Library/Application Support/pypoetry/auth.toml"},
	".terraformrc":                            {".terraformrc"},
	"terraform.rc":                            {"AppData/Roaming/terraform.rc"},
	".config/rclone/rclone.conf":              {".config/rclone/rclone.conf"},
	".boto":                                   {".boto"},
	".s3cfg":                                  {".s3cfg"},
	".databrickscfg":                          {".databrickscfg"},
	".dbt/profiles.yml":                       {".dbt/profiles.yml"},
	".config/doctl/config.yaml":               {".config/doctl/config.yaml"},
	".fly/config.yml":                         {".fly/config.yml"},
	".wrangler/config":                        {".wrangler/config/default.toml", ".config/.wrangler/config/default.toml"},
	".circleci/cli.yml":                       {".circleci/cli.yml"},
	"com.vercel.cli/auth.json":                {".local/share/com.vercel.cli/auth.json", "Library/Application Support/com.vercel.cli/auth.json"},
	".config/configstore/firebase-tools.json": {".config/configstore/firebase-tools.json"},
	".kaggle/kaggle.json":                     {".kaggle/kaggle.json"},
	".cache/huggingface/token":                {".cache/huggingface/token"},
	".cache/huggingface/stored_tokens":        {".cache/huggingface/stored_tokens"},
	".huggingface/token":                      {".huggingface/token"},
	"containers/auth.json":                    {".config/containers/auth.json", "run/user/1000/containers/auth.json"},
	"sops/age/keys.txt":                       {".config/sops/age/keys.txt", "Library/Application Support/sops/age/keys.txt"},
	".my.cnf":                                 {".my.cnf"},
	".mylogin.cnf":                            {".mylogin.cnf"},

	"*.keychain":            {"login.keychain", "backup/work.keychain"},
	"*.keychain-db":         {"old/login.keychain-db"},
	"login.keychain*":       {"Library/Keychains/login.keychain-db.sb-5a3f2c1e-AbCdEf", "backup/login.keychain.bak"},
	"library/keychains":     {"Library/Keychains", "Library/Keychains/ABCD-1234/keychain-2.db"},
	".local/share/keyrings": {".local/share/keyrings/login.keyring", ".local/share/keyrings/Default_keyring.keyring"},
	".local/share/kwalletd": {".local/share/kwalletd/kdewallet.kwl", ".local/share/kwalletd/kdewallet.salt"},
	"*.kwl":                 {"backup/kdewallet.kwl"},

	".password-store":     {".password-store/email/work.gpg"},
	".local/share/gopass": {".local/share/gopass/stores/root/web/github.gpg"},
	"*.kdbx":              {"Passwords.kdbx", "sync/Work.KDBX"},
	"*.keyx":              {"Passwords.keyx"},
	".config/bitwarden*": {
		".config/Bitwarden/data.json",
		".config/Bitwarden CLI/data.json",
		"snap/bitwarden/current/.config/Bitwarden/data.json",
	},
	"library/application support/bitwarden*": {
		"Library/Application Support/Bitwarden/data.json",
		"Library/Application Support/Bitwarden CLI/data.json",
		"Library/Containers/com.bitwarden.desktop/Data/Library/Application Support/Bitwarden/data.json",
	},
	".config/1password": {".config/1Password", ".config/1Password/settings/settings.json"},
	"library/application support/1password*": {
		"Library/Application Support/1Password/data",
		"Library/Application Support/1Password 4/Data/B5.sqlite",
	},
	"2bua8c4s2c.com.1password*": {
		"Library/Group Containers/2BUA8C4S2C.com.1password/Library/Application Support/1Password/Data/1password.sqlite",
		"Library/Containers/2BUA8C4S2C.com.1password.browser-helper",
	},
	"2bua8c4s2c.com.agilebits*": {
		"Library/Group Containers/2BUA8C4S2C.com.agilebits/Library/Application Support/1Password/Data/B5.sqlite",
		"Library/Containers/2BUA8C4S2C.com.agilebits.onepassword-osx-helper/Data/Library/Data/B5.sqlite",
	},
	"*.agilekeychain": {"Dropbox/1Password.agilekeychain/data/default/contents.js"},
	"*.opvault":       {"Dropbox/1Password.opvault/default/profile.js"},

	".mozilla":                                  {".mozilla/firefox/abc.default-release/places.sqlite"},
	".config/google-chrome":                     {".config/google-chrome/Default/Preferences"},
	".config/chromium":                          {".config/chromium/Default/History"},
	".config/bravesoftware":                     {".config/BraveSoftware/Brave-Browser/Default/History"},
	"library/application support/google/chrome": {"Library/Application Support/Google/Chrome/Default/Web Data"},
	"library/application support/chromium":      {"Library/Application Support/Chromium/Default/History"},
	"library/application support/bravesoftware": {"Library/Application Support/BraveSoftware/Brave-Browser/Local State"},
	"library/application support/firefox":       {"Library/Application Support/Firefox/Profiles/abc.default/places.sqlite"},
	"login data":                                {"backup/Default/Login Data"},
	"login data for account":                    {"backup/Default/Login Data For Account"},
	"cookies.sqlite":                            {"profile-copy/cookies.sqlite"},
	"logins.json":                               {"profile.default-release/logins.json"},
	"key3.db":                                   {"old-profile/key3.db"},
	"key4.db":                                   {"profile.default-release/key4.db"},
	"default/cookies":                           {"backup/Default/Cookies"},
	"default/network/cookies":                   {"backup/Default/Network/Cookies"},
	"profile */cookies":                         {"backup/Profile 2/Cookies"},
	"profile */network/cookies":                 {"backup/Profile 2/Network/Cookies"},
	"cookies.binarycookies": {
		"Library/Cookies/Cookies.binarycookies",
		"Library/Containers/com.apple.Safari/Data/Library/Cookies/Cookies.binarycookies",
	},

	"etc/shadow":   {"etc/shadow"},
	"etc/shadow-":  {"etc/shadow-"},
	"etc/gshadow":  {"etc/gshadow"},
	"etc/gshadow-": {"etc/gshadow-"},
}

// ordinaryTwins are paths next to, or named like, sensitive files that hold
// no credential: none of them may be refused by the defaults.
var ordinaryTwins = []string{
	"token.go", "internal/token/token.go", "tokens.json", "design/tokens.json", "token.json.example",
	"secrets.md", "docs/secrets.md", "secrets.example.yaml", "charts/app/templates/secret.yaml",
	"docs/credentials.md", "internal/credentials/store.go", "credentials_test.go", ".config/credentials.md",
	"service.json", "service_account.go", "k8s/serviceaccount.yaml", "oauth/client_secret.go",
	"my.cnf", "my.cnf.example", "etc/mysql/my.cnf",
	"src/keyring.go", "keychain/keychain.go", "usr/share/keyrings/debian-archive-keyring.gpg", "share/keyrings/x.gpg",
	"config.json", "auth.go", ".config/app/settings.json", ".config/gh/config.yml", ".config/git/config",
	".config/keepassxc/keepassxc.ini", ".local/share/applications/editor.desktop",
	"pom.xml", ".m2/repository/org/x/x-1.0.pom", "gradle.properties", "app/gradle.properties",
	".cargo/config.toml", ".gem/specs/index", ".kube/cache/discovery/x.json", "main.tf", ".terraform.lock.hcl",
	"containers/auth.go", "docs/huggingface/token.md", "sops/README.md", ".wrangler/state/v3/d1.sqlite",
	"bitwarden/apps/desktop/src/main.ts", "onepassword/client.go", "Library/Application Support/Code/User/settings.json",
	"etc/passwd", "etc/hosts", "etc/shadowsocks.json", "etc/sudoers",
	"keys.txt", "age/README.md", "profiles.yml.example",
}

func TestSensitiveTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range DefaultSensitive {
		if seen[p] {
			t.Errorf("DefaultSensitive lists %q twice", p)
		}
		seen[p] = true
		if p != strings.ToLower(p) {
			t.Errorf("DefaultSensitive entry %q is not lowercase; patterns are written in lowercase (they match case-insensitively)", p)
		}
		examples, ok := sensitiveExamples[p]
		if !ok || len(examples) == 0 {
			t.Errorf("DefaultSensitive entry %q has no example in sensitiveExamples; add a path it must match", p)
			continue
		}
		pat, err := compilePatterns([]string{p})
		if err != nil {
			t.Errorf("DefaultSensitive entry %q: %v", p, err)
			continue
		}
		t.Run(p, func(t *testing.T) {
			for _, rel := range examples {
				if !matchRun(pat[0].elems, strings.Split(strings.ToLower(rel), "/")) {
					t.Errorf("pattern %q does not match its example %q", p, rel)
				}
				if !Sensitive(rel) {
					t.Errorf("Sensitive(%q) = false; want true (example of %q)", rel, p)
				}
			}
		})
	}
	for p := range sensitiveExamples {
		if !seen[p] {
			t.Errorf("sensitiveExamples has %q, which is not in DefaultSensitive; remove it", p)
		}
	}
}

func TestSensitiveTableTwins(t *testing.T) {
	for _, rel := range ordinaryTwins {
		if rule, ok := sensitiveRule(defaultPatterns, nil, rel); ok {
			t.Errorf("Sensitive(%q) = true (rule %q); want false: it holds no credential", rel, rule)
		}
	}
}

// TestAllowSensitiveNewEntry: the owner's allowance opens exactly the path
// it names, also for a file that only the wider table makes sensitive.
func TestAllowSensitiveNewEntry(t *testing.T) {
	f := newFixture(t, func(o *Options) { o.AllowSensitive = []string{"config/secrets.json"} })
	write(t, f.root, "config/secrets.json", `{"fixture": true}`)
	write(t, f.root, "secrets.json", `{"token": "canary"}`)
	write(t, f.root, "other/config/secrets.json", `{"token": "canary"}`)
	write(t, f.root, "config/secrets.yaml", "token: canary")
	write(t, f.docs, "config/secrets.json", `{"token": "canary"}`)

	allowed := Path{Root: "main", Rel: "config/secrets.json", inDefault: true}
	if got, err := f.ws.ReadFile(allowed); err != nil || string(got) != `{"fixture": true}` {
		t.Errorf("ReadFile(%s) = %q, %v; the owner allowed it", allowed.Rel, got, err)
	}
	if _, err := f.ws.writeFile(allowed, []byte(`{"fixture": false}`)); err != nil {
		t.Errorf("WriteFile(%s) = %v; the owner allowed it", allowed.Rel, err)
	}
	for _, c := range []struct {
		root, rel string
		want      bool
	}{
		{"main", "config/secrets.json", false},
		{"main", "secrets.json", true},
		{"main", "other/config/secrets.json", true},
		{"main", "config/secrets.yaml", true},
		{"main", "config/SECRETS.json", true}, // allowances are exact
		{"docs", "config/secrets.json", true}, // allowed in main only
	} {
		if got := f.ws.Sensitive(c.root, c.rel); got != c.want {
			t.Errorf("Sensitive(%s, %s) = %v; want %v", c.root, c.rel, got, c.want)
		}
	}
	for _, rel := range []string{"secrets.json", "other/config/secrets.json", "config/secrets.yaml"} {
		p := Path{Root: "main", Rel: rel, inDefault: true}
		if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrSensitive) {
			t.Errorf("ReadFile(%s) = %q, %v; want ErrSensitive", rel, data, err)
		}
	}
	p, err := f.ws.PathIn("docs", "config/secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := f.ws.ReadFile(p); !errors.Is(err, ErrSensitive) {
		t.Errorf("ReadFile(%s) = %q, %v; want ErrSensitive", p, data, err)
	}
}

// lobster0Names are the credential paths the workspace policy tests of a
// peer agent runtime, Lobster0 (github.com/NEDONION/lobster0,
// tests/test_workspace_policy.py), expect to be refused, written relative
// to a root (absolute ones as seen from a root at /). Each is sensitive
// here too, or listed in lobster0NotSensitive with the reason.
var lobster0Names = []string{
	".env", ".env.local", ".SSH/id_ed25519", ".aws/credentials", ".gnupg/private-keys-v1.d/key",
	".kube/config", ".config/gcloud/application_default_credentials.json", "id_rsa", "credentials.json",
	".netrc", ".npmrc", ".git-credentials", ".pypirc", ".docker/config.json",
	"token.json", "secrets.json", "secrets.yaml",
	"client.pem", "private.key", "identity.p12", "identity.pfx", "truststore.jks", "release.keystore",
	"config.toml", "lobster0.db", "lobster0.db-wal", "lobster0.db-shm", "lobster0.db-journal", "logs/lobster0.log",
	"etc/shadow", "etc/gshadow", "etc/sudoers", "var/run/docker.sock", "run/containerd/containerd.sock",
	"Library/Keychains/login.keychain-db", "Library/Safari/History.db",
	"Library/Application Support/Google/Chrome/Default/Cookies",
	"Library/Application Support/1Password/data",
	".local/share/keyrings/login.keyring",
}

// lobster0NotSensitive are the Lobster0 names deliberately left out of the
// table, each with why.
var lobster0NotSensitive = map[string]string{
	"config.toml":                    "Lobster0's own state; homard's own files are refused as protected (limit.protected) by location, and config.toml is an ordinary project file name",
	"lobster0.db":                    "Lobster0's own database; homard protects its own database by location, not by name",
	"lobster0.db-wal":                "Lobster0's own database; homard protects its own database by location, not by name",
	"lobster0.db-shm":                "Lobster0's own database; homard protects its own database by location, not by name",
	"lobster0.db-journal":            "Lobster0's own database; homard protects its own database by location, not by name",
	"logs/lobster0.log":              "Lobster0's own log; homard's own data folder is protected by location",
	"etc/sudoers":                    "access policy, not a credential; a read-only root is never written",
	"var/run/docker.sock":            "a socket: file tools read only regular files, and the sandbox's seccomp filter refuses UNIX sockets to commands",
	"run/containerd/containerd.sock": "a socket: file tools read only regular files, and the sandbox's seccomp filter refuses UNIX sockets to commands",
	"Library/Safari/History.db":      "browsing history is private but no credential; Safari's cookies (Cookies.binarycookies) are sensitive",
}

func TestSensitiveLobster0Names(t *testing.T) {
	for _, rel := range lobster0Names {
		reason, skip := lobster0NotSensitive[rel]
		got := Sensitive(rel)
		switch {
		case skip && got:
			t.Errorf("Sensitive(%q) = true, but lobster0NotSensitive says %q; remove it from that map", rel, reason)
		case !skip && !got:
			t.Errorf("Sensitive(%q) = false; want true (Lobster0 refuses it), or list it in lobster0NotSensitive with a reason", rel)
		}
	}
	for rel := range lobster0NotSensitive {
		if !slices.Contains(lobster0Names, rel) {
			t.Errorf("lobster0NotSensitive has %q, which is not in lobster0Names", rel)
		}
	}
}

// TestSensitiveDocumented: the section "Sensitive files" of docs/RULES.md
// lists exactly DefaultSensitive, one backquoted pattern at a time on its
// "- " lines.
func TestSensitiveDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "RULES.md"))
	if err != nil {
		t.Fatalf("read docs/RULES.md: %v", err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Sensitive files")
	if !ok {
		t.Fatal(`docs/RULES.md has no section "## Sensitive files"; add one listing DefaultSensitive`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var listed []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "- ") {
			continue
		}
		parts := strings.Split(line, "`")
		for i := 1; i < len(parts); i += 2 {
			listed = append(listed, parts[i])
		}
	}
	for _, p := range DefaultSensitive {
		if !slices.Contains(listed, p) {
			t.Errorf("docs/RULES.md, Sensitive files: `%s` is not listed; add it", p)
		}
	}
	for _, p := range listed {
		if !slices.Contains(DefaultSensitive, p) {
			t.Errorf("docs/RULES.md, Sensitive files: `%s` is not in DefaultSensitive; remove it or add it to the table", p)
		}
	}
}

// FuzzSensitiveElement: the string comparisons that stand in for
// path.Match on plain, "*suffix" and "prefix*" elements agree with it.
func FuzzSensitiveElement(f *testing.F) {
	names := []string{"", ".env", "server.pem", "login.keychain-db.sb-1", "credentials", "credentials.toml", "profile 2", "x*y", "[x", `a\b`}
	for _, p := range DefaultSensitive {
		for _, e := range strings.Split(p, "/") {
			for _, n := range names {
				f.Add(e, n)
			}
		}
	}
	f.Add("*", "")
	f.Add("a*b*", "ab")
	f.Add("[a-c]*", "b.key")
	f.Fuzz(func(t *testing.T, elem, name string) {
		if strings.Contains(name, "/") || checkPattern(elem) != nil || strings.Contains(elem, "/") {
			return
		}
		want, _ := path.Match(elem, name)
		if got := newElement(elem).match(name); got != want {
			t.Errorf("element %q matching %q = %v; path.Match says %v", elem, name, got, want)
		}
	})
}
