package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/homard/homard/internal/atomicfile"
	"github.com/homard/homard/internal/filelock"
)

// Vault errors.
var (
	ErrNoSecret    = errors.New("no such secret; `homard secret list` shows the names")
	ErrSecretName  = errors.New("a secret name is 1-64 characters of a-z, 0-9, _ and -")
	ErrSecretHost  = errors.New("a secret needs at least one host name it is released to (--host api.example.com); no wildcards, schemes or paths")
	ErrVaultKey    = errors.New("the vault key file is missing or unreadable")
	ErrVaultFormat = errors.New("the vault file is damaged")
	ErrNotBound    = errors.New("the secret is not released to this host")
	// ErrPlainHTTP: the request would carry the secret in clear text
	// (http://) and the secret was not stored with --allow-http.
	ErrPlainHTTP = errors.New("the secret is not sent over plain http")
	// ErrChannelSecret: the secret is a chat channel's bot token, which
	// only that channel's adapter gets (ChannelToken); no tool, MCP
	// server or skill request ever carries it.
	ErrChannelSecret = errors.New("the secret is a chat channel's bot token and is never released to a tool")
)

// Secret is one vault entry as shown to people: never its value.
type Secret struct {
	Name    string    `json:"name"`
	Hosts   []string  `json:"hosts"`
	Header  string    `json:"header"` // HTTP header the value goes into
	Format  string    `json:"format"` // "{}" is replaced by the value
	Created time.Time `json:"created"`
	// AllowHTTP lets the secret go to its hosts over plain http:// (a
	// service on the owner's own network without TLS). False means https
	// only: anyone on the path could read a credential sent in clear text.
	AllowHTTP bool `json:"allow_http,omitempty"`
	// Channel, when set, makes the secret a chat channel's bot token
	// (telegram, discord, feishu): it has no hosts, Bound and Release
	// refuse it (ErrChannelSecret), and only ChannelToken for that
	// channel returns it.
	Channel string `json:"channel,omitempty"`
}

// sealed is one entry as stored: the value encrypted with AES-256-GCM, the
// entry's metadata as associated data, so moving a ciphertext to another
// name or host list makes it fail to open.
type sealed struct {
	Secret
	Nonce []byte `json:"nonce"`
	Box   []byte `json:"box"`
}

// Vault holds secrets encrypted at rest in one JSON file, with the key in a
// separate 0600 file. It is safe for concurrent use within one process;
// writes replace the file atomically.
type Vault struct {
	path, keyPath string

	mu      sync.Mutex // guards entries and aead
	entries map[string]sealed
	aead    cipher.AEAD

	// prk is the HKDF pseudorandom key extracted from the vault key at
	// open (derive.go); it never changes, so it needs no lock.
	prk []byte
}

// Compiled on first use (storing a secret), not at package init: a counted
// repetition compiles into a long program, and most processes never store.
var (
	nameRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]{1,64}$`) })
	hdrRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`) })
	chanRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{1,32}$`) })
)

// OpenVault opens (creating if needed) the vault file and its key file.
// The key is 32 random bytes written once with mode 0600; a key file with
// looser permissions is refused.
func OpenVault(path, keyPath string) (*Vault, error) {
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("vault key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("vault key: %w", err)
	}
	prk, err := extract(key)
	if err != nil {
		return nil, fmt.Errorf("vault key: %w", err)
	}
	v := &Vault{path: path, keyPath: keyPath, aead: aead, prk: prk}
	if v.entries, err = readEntries(path); err != nil {
		return nil, err
	}
	return v, nil
}

// readEntries reads the vault file; a missing one holds nothing.
func readEntries(path string) (map[string]sealed, error) {
	entries := map[string]sealed{}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return entries, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open vault: %w", err)
	}
	var list []sealed
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrVaultFormat, path, err)
	}
	for _, e := range list {
		entries[e.Name] = e
	}
	return entries, nil
}

// reload takes the file's entries before a change is written, so a write
// keeps what another process stored since this one opened the vault (the
// CLI's secret set beside a running serve that refreshes an MCP login).
// The caller holds v.mu. An unreadable file keeps the entries in memory.
func (v *Vault) reload() {
	if e, err := readEntries(v.path); err == nil {
		v.entries = e
	}
}

func loadKey(keyPath string) ([]byte, error) {
	fi, err := os.Stat(keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		key := make([]byte, 32)
		_, _ = rand.Read(key) // crypto/rand.Read never fails on Linux
		if err := os.MkdirAll(filepath.Dir(keyPath), 0o700); err != nil {
			return nil, fmt.Errorf("create vault key: %w", err)
		}
		f, err := os.OpenFile(keyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("create vault key: %w", err)
		}
		_, werr := f.Write(key)
		if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
			return nil, fmt.Errorf("create vault key: %w", err)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrVaultKey, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o; run chmod 600 %s", ErrVaultKey, keyPath, fi.Mode().Perm(), keyPath)
	}
	key, err := os.ReadFile(keyPath)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("%w: %s must hold exactly 32 bytes", ErrVaultKey, keyPath)
	}
	return key, nil
}

// Check reports whether Set would store value under s, without storing
// anything: a front end checks a typed key before it writes anything else.
func Check(s Secret, value []byte) error {
	_, _, err := check(s, value)
	return err
}

// check validates s and value and returns them as Set stores them: s's
// hosts lower-cased, sorted and unique, its header and format defaulted,
// value without a trailing line end. s.Hosts is not modified.
func check(s Secret, value []byte) (Secret, []byte, error) {
	if !nameRe().MatchString(s.Name) {
		return s, nil, fmt.Errorf("secret %q: %w", s.Name, ErrSecretName)
	}
	s.Hosts = slices.Clone(s.Hosts)
	switch {
	case s.Channel != "" && (!chanRe().MatchString(s.Channel) || len(s.Hosts) > 0 || s.AllowHTTP):
		return s, nil, fmt.Errorf("secret %s: a channel token (--channel %s) is for its channel only: no --host or --allow-http", s.Name, s.Channel)
	case s.Channel == "" && len(s.Hosts) == 0:
		return s, nil, ErrSecretHost
	}
	for i, h := range s.Hosts {
		h = strings.ToLower(h)
		if !validHost(h) {
			return s, nil, fmt.Errorf("host %q: %w", h, ErrSecretHost)
		}
		s.Hosts[i] = h
	}
	slices.Sort(s.Hosts)
	s.Hosts = slices.Compact(s.Hosts)
	if s.Header == "" {
		s.Header = "Authorization"
	}
	if !hdrRe().MatchString(s.Header) {
		return s, nil, fmt.Errorf("header %q: want letters, digits and -", s.Header)
	}
	if s.Format == "" {
		s.Format = "Bearer {}"
	}
	if strings.Count(s.Format, "{}") != 1 || strings.ContainsAny(s.Format, "\r\n") {
		return s, nil, fmt.Errorf("format %q: want exactly one {} and no line breaks", s.Format)
	}
	value = bytes.TrimRight(value, "\r\n")
	if len(value) < MinKnownLen {
		return s, nil, fmt.Errorf("secret %s: the value is shorter than %d bytes, too short to redact reliably", s.Name, MinKnownLen)
	}
	if bytes.ContainsAny(value, "\r\n") {
		return s, nil, fmt.Errorf("secret %s: the value spans several lines; a header value cannot", s.Name)
	}
	return s, value, nil
}

// Set stores value under s.Name, replacing an entry of that name. It
// refuses what Check refuses.
func (v *Vault) Set(s Secret, value []byte) error {
	s, value, err := check(s, value)
	if err != nil {
		return err
	}
	if s.Created.IsZero() {
		s.Created = time.Now().UTC()
	}
	return v.update(func(next map[string]sealed) error {
		e := sealed{Secret: s, Nonce: make([]byte, v.aead.NonceSize())}
		_, _ = rand.Read(e.Nonce)
		e.Box = v.aead.Seal(nil, e.Nonce, value, associated(s))
		next[s.Name] = e
		return nil
	})
}

// Remove deletes a secret.
func (v *Vault) Remove(name string) error {
	return v.update(func(next map[string]sealed) error {
		if _, ok := next[name]; !ok {
			return fmt.Errorf("secret %q: %w", name, ErrNoSecret)
		}
		delete(next, name)
		return nil
	})
}

// update applies change to a copy of the entries, reloaded from the file
// first, then saves the copy and keeps it; an error from change leaves
// the file and v.entries unchanged. It holds v.mu and the vault's file
// lock throughout, which orders serve's and the CLI's writes.
func (v *Vault) update(change func(next map[string]sealed) error) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	unlock, err := filelock.Lock(v.path + ".lock")
	if err != nil {
		return fmt.Errorf("lock vault: %w", err)
	}
	defer unlock()
	v.reload()
	next := maps.Clone(v.entries)
	if next == nil {
		next = map[string]sealed{}
	}
	if err := change(next); err != nil {
		return err
	}
	if err := v.save(next); err != nil {
		return err
	}
	v.entries = next
	return nil
}

// List returns every secret's name and binding, sorted by name.
func (v *Vault) List() []Secret {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]Secret, 0, len(v.entries))
	for _, e := range v.entries {
		s := e.Secret
		s.Hosts = slices.Clone(s.Hosts)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Bound reports, without decrypting anything, whether the secret exists
// and may be sent to host over scheme ("https", or "http" when the secret
// allows it). Tools call it when planning; Release is called only when the
// request is made.
func (v *Vault) Bound(name, scheme, host string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	_, err := v.bound(name, scheme, host)
	return err
}

// bound finds the entry of name and checks that it may be sent to host
// over scheme. The caller holds v.mu.
func (v *Vault) bound(name, scheme, host string) (sealed, error) {
	e, ok := v.entries[name]
	if !ok {
		return sealed{}, fmt.Errorf("secret %q: %w", name, ErrNoSecret)
	}
	if e.Channel != "" {
		return sealed{}, fmt.Errorf("%w: secret %q is the %s channel's", ErrChannelSecret, name, e.Channel)
	}
	if !slices.Contains(e.Hosts, strings.ToLower(host)) {
		return sealed{}, fmt.Errorf("%w: secret %q is not bound to host %q (bound to %s)", ErrNotBound, name, host, strings.Join(e.Hosts, ", "))
	}
	switch strings.ToLower(scheme) {
	case "https":
	case "http":
		if !e.AllowHTTP {
			return sealed{}, fmt.Errorf("%w: secret %q would travel in clear text to http://%s; use an https URL, or, for a service on your own network without TLS, store it again with `homard secret set %s --host %s --allow-http`",
				ErrPlainHTTP, name, host, name, strings.Join(e.Hosts, " --host "))
		}
	default:
		return sealed{}, fmt.Errorf("%w: secret %q is only sent over https (or http when allowed), not %q", ErrNotBound, name, scheme)
	}
	return e, nil
}

// Release returns the header name and value to put into a request to host
// over scheme, only if the secret is bound to exactly that host (lowercase,
// with port when the binding names one) and the scheme is https, or http
// for a secret stored with AllowHTTP. It is meant for the egress boundary
// alone.
func (v *Vault) Release(name, scheme, host string) (header, value string, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, err := v.bound(name, scheme, host)
	if err != nil {
		return "", "", err
	}
	plain, err := v.aead.Open(nil, e.Nonce, e.Box, associated(e.Secret))
	if err != nil {
		return "", "", fmt.Errorf("%w: secret %q does not decrypt with this key", ErrVaultFormat, name)
	}
	return e.Header, strings.Replace(e.Format, "{}", string(plain), 1), nil
}

// ReleaseValue returns the bare value of a secret for a client that builds
// its own header (a model API client), under the same rule as Release.
func (v *Vault) ReleaseValue(name, scheme, host string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, err := v.bound(name, scheme, host)
	if err != nil {
		return "", err
	}
	plain, err := v.aead.Open(nil, e.Nonce, e.Box, associated(e.Secret))
	if err != nil {
		return "", fmt.Errorf("%w: secret %q does not decrypt with this key", ErrVaultFormat, name)
	}
	return string(plain), nil
}

// ChannelToken returns the bot token stored under name for the chat
// channel platform: only a secret stored with that Channel tag. It is
// meant for internal/app starting that channel's adapter alone.
func (v *Vault) ChannelToken(name, platform string) (string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.entries[name]
	if !ok {
		return "", fmt.Errorf("secret %q: %w", name, ErrNoSecret)
	}
	if e.Channel == "" || e.Channel != platform {
		return "", fmt.Errorf("%w: secret %q is not tagged for the %s channel; store it with `homard secret set %s --channel %s`", ErrNotBound, name, platform, name, platform)
	}
	plain, err := v.aead.Open(nil, e.Nonce, e.Box, associated(e.Secret))
	if err != nil {
		return "", fmt.Errorf("%w: secret %q does not decrypt with this key", ErrVaultFormat, name)
	}
	return string(plain), nil
}

// Values returns every decrypted value, for building a Redactor. Entries
// that fail to decrypt are reported, not skipped silently.
func (v *Vault) Values() ([]string, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	var errs []error
	for _, e := range v.entries {
		plain, err := v.aead.Open(nil, e.Nonce, e.Box, associated(e.Secret))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: secret %q does not decrypt with this key", ErrVaultFormat, e.Name))
			continue
		}
		out = append(out, string(plain))
		out = append(out, tokenFields(plain)...)
	}
	return out, errors.Join(errs...)
}

// tokenFields returns the token and secret fields of a value that is a
// JSON object (a hosted MCP server's login: access_token, refresh_token,
// client_secret), each a known value on its own: a server that echoes its
// own token is redacted though the vault holds the whole object.
func tokenFields(plain []byte) []string {
	if len(plain) == 0 || plain[0] != '{' {
		return nil
	}
	var obj map[string]any
	if json.Unmarshal(plain, &obj) != nil {
		return nil
	}
	var out []string
	for k, v := range obj {
		k = strings.ToLower(k)
		if s, ok := v.(string); ok && (strings.HasSuffix(k, "token") || strings.HasSuffix(k, "secret")) {
			out = append(out, s)
		}
	}
	return out
}

// associated binds a ciphertext to its entry's name, hosts, header and
// format, and to AllowHTTP when it is set (so entries stored before the
// flag existed still open, and turning it on by editing the file breaks
// the entry instead of widening it).
func associated(s Secret) []byte {
	ad := []any{s.Name, s.Hosts, s.Header, s.Format}
	if s.AllowHTTP {
		ad = append(ad, "allow_http")
	}
	if s.Channel != "" {
		ad = append(ad, "channel:"+s.Channel)
	}
	b, _ := json.Marshal(ad)
	return b
}

// save writes the entries atomically with mode 0600.
func (v *Vault) save(entries map[string]sealed) error {
	list := make([]sealed, 0, len(entries))
	for _, e := range entries {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("save vault: %w", err)
	}
	if err := atomicfile.Write(v.path, b, 0o600); err != nil {
		return fmt.Errorf("save vault: %w", err)
	}
	return nil
}

// validHost reports whether h is a lowercase host name or IPv4 address with
// an optional ":port" of 1–5 digits; each dot-separated label is 1–63 of
// a-z, 0-9 and inner hyphens. Checked by hand rather than by a regexp: Go
// compiles the counted repetition of a label pattern into a program of
// ~0.4 MB, allocated at every start.
func validHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if hasPort {
		if len(port) < 1 || len(port) > 5 {
			return false
		}
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return false
			}
		}
	}
	if name == "" {
		return false
	}
	for l := range strings.SplitSeq(name, ".") {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
