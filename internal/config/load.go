package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// maxFileSize bounds how much of a config file Load reads. A real config is a
// few KiB; anything this large is a mistake.
const maxFileSize = 1 << 20

// Load reads, completes and validates the config file at path. A missing file
// is an error wrapping fs.ErrNotExist that tells the owner to run
// `homard setup`. Every other error names the file and the offending key; a
// syntax error also gives line and column. Several problems may be reported
// at once, joined with newlines.
//
// Relative and "~/" root paths are resolved against the config file's folder
// and HOME. On Unix a world-writable file is refused, since whoever can write
// the config can widen what tools may do.
//
// A file of an older config_version is read as migrated to CurrentVersion,
// in memory: Load never writes (ReadMigration and Migration.Apply do). A
// newer config_version is refused with an error wrapping ErrNewerVersion.
func Load(path string) (*Config, error) {
	return load(path, os.Getenv)
}

func load(path string, getenv func(string) string) (*Config, error) {
	abs, data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return parse(path, filepath.Dir(abs), data, getenv)
}

// readFile reads the config file at path with Load's checks: it exists,
// is a regular file no bigger than maxFileSize and, on Unix, is not
// writable by every user. It returns the file's absolute path too.
func readFile(path string) (string, []byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("load config %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, fmt.Errorf("config file %s does not exist: run `homard setup` to create it: %w", path, err)
	}
	if err != nil {
		return "", nil, fmt.Errorf("load config: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, fmt.Errorf("load config: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("load config: %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o002 != 0 {
		return "", nil, fmt.Errorf("load config: %s is writable by every user (mode %04o): run `chmod 600 %s`",
			path, fi.Mode().Perm(), path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return "", nil, fmt.Errorf("load config: %w", err)
	}
	if len(data) > maxFileSize {
		return "", nil, fmt.Errorf("load config: %s is larger than %d bytes", path, maxFileSize)
	}
	return abs, data, nil
}

// parse migrates data to CurrentVersion in memory (version.go), decodes
// it, fills defaults, resolves root paths against dir and validates. name
// is the file name used in error messages. A file of a newer version is
// refused before anything else: its keys may mean what this homard does
// not know.
func parse(name, dir string, data []byte, getenv func(string) string) (*Config, error) {
	cur, _, _, err := migrate(data)
	switch {
	case errors.Is(err, ErrNewerVersion) || errors.Is(err, errBadVersion):
		return nil, fmt.Errorf("%s: %w", name, err)
	case err != nil:
		// Not TOML, or config_version is not an integer: decoding the
		// file as it is says where.
		cur = data
	}
	c, err := decode(name, dir, cur, getenv)
	if err != nil && !bytes.Equal(cur, data) {
		// Errors name lines of the file on disk, which the owner sees,
		// not of the migrated text.
		if _, errOnDisk := decode(name, dir, data, getenv); errOnDisk != nil {
			return nil, errOnDisk
		}
	}
	return c, err
}

// decode decodes data, fills defaults, resolves root paths against dir and
// validates.
func decode(name, dir string, data []byte, getenv func(string) string) (*Config, error) {
	// [models] holds a table per model name beside [models.roles]: it is
	// left as primitives here (the outer field hides Config.Models from
	// the decoder) and decoded by decodeModels.
	// config_version is read by migrate (version.go), which has made
	// it CurrentVersion; it is no setting, so it lives here, not in
	// Config.
	doc := struct {
		*Config
		Models  map[string]toml.Primitive `toml:"models"`
		Version int64                     `toml:"config_version"`
	}{Config: &Config{}}
	c := doc.Config
	applyDefaults(c)
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		return nil, decodeError(name, data, err)
	}
	var ps problems
	if err := decodeModels(md, doc.Models, c, &ps); err != nil {
		return nil, decodeError(name, data, err)
	}
	if errs := unknownKeys(name, data, md); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	applyModelDefaults(&c.Model)
	if !md.IsDefined("model", "context_tokens") {
		presetContext(&c.Model)
	}
	c.Channels.ByName() // an entry (off) for every platform left out

	resolveRoots(c, dir, getenv, &ps)
	validate(c, &ps)
	if err := ps.err(name); err != nil {
		return nil, err
	}
	return c, nil
}

// decodeError rewrites a TOML error as "file:line:col: key: message".
func decodeError(name string, data []byte, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		if pe.LastKey != "" {
			msg = pe.LastKey + ": " + msg
		}
		line, col := pe.Position.Line, pe.Position.Col
		if s := pe.Position.Start; s > 0 && s <= len(data) {
			// The parser counts an offending newline as the start of
			// the next line; the byte offset is exact, so recount.
			line = bytes.Count(data[:s], []byte("\n")) + 1
			col = s - bytes.LastIndexByte(data[:s], '\n')
		}
		if line > 0 {
			return fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
		}
		return fmt.Errorf("%s: %s", name, msg)
	}
	// Type mismatches are plain errors: `toml: line N (last key "k"): msg`.
	msg := strings.TrimPrefix(err.Error(), "toml: ")
	if m := typeErrorRE().FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("%s:%s: %s: %s", name, m[1], m[2], m[3])
	}
	return fmt.Errorf("%s: %s", name, msg)
}

var typeErrorRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+) \(last key "(.*)"\): (.*)$`) })

// resolveRoots expands "~/" and makes relative root paths absolute against
// dir, the config file's folder; a root without access is "rw". It also
// expands "~/" in commands.path (relative entries are left for validate to
// refuse: a program folder is never guessed).
func resolveRoots(c *Config, dir string, getenv func(string) string, ps *problems) {
	for i := range c.Workspace.Roots {
		r := &c.Workspace.Roots[i]
		key := fmt.Sprintf("workspace.roots[%d].path", i)
		if r.Path == "" {
			continue // validate reports it
		}
		p, err := expandTilde(r.Path, getenv)
		if err != nil {
			ps.add("%s = %q: %v", key, r.Path, err)
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		r.Path = filepath.Clean(p)
	}
	for i := range c.Workspace.Roots {
		if r := &c.Workspace.Roots[i]; r.Access == "" {
			r.Access = AccessReadWrite
		}
	}
	for i, d := range c.Commands.Path {
		p, err := expandTilde(d, getenv)
		if err != nil {
			ps.add("commands.path[%d] = %q: %v", i, d, err)
			continue
		}
		if filepath.IsAbs(p) {
			c.Commands.Path[i] = filepath.Clean(p)
		} // else validate reports it
	}
}

// problems collects validation messages of the form "key = value: what is
// allowed" so that one Load reports all of them.
type problems []string

func (ps *problems) add(format string, args ...any) {
	*ps = append(*ps, fmt.Sprintf(format, args...))
}

// err returns nil or every problem prefixed by name, joined.
func (ps problems) err(name string) error {
	if len(ps) == 0 {
		return nil
	}
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = fmt.Errorf("%s: %s", name, p)
	}
	return errors.Join(errs...)
}
