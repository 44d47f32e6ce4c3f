package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// CurrentVersion is the config_version this homard writes and reads. A
// file without config_version is version 0: every config written before
// the key existed.
const CurrentVersion = 1

// ErrNewerVersion: the file's config_version is newer than this homard
// knows. It is refused, never read as an older format.
var ErrNewerVersion = errors.New("config_version is newer than this homard")

// errBadVersion: config_version is negative.
var errBadVersion = errors.New("bad config_version")

// step turns the text of a file of version from into version from+1. Apply
// is pure: it gets the file's bytes and returns the new bytes, keeping
// the owner's comments and layout. A later change of format adds a step;
// a step never changes what an existing setting means without saying so
// in its note.
type step struct {
	from int
	// note says in a few words what the step changes, for the owner.
	note  string
	apply func(data []byte) ([]byte, error)
}

// steps are the migrations in order: steps[i].from == i.
func steps() []step {
	return []step{
		{from: 0, note: "adds config_version = 1; no setting changes meaning", apply: addVersion1},
	}
}

// addVersion1 is the step 0 → 1: the file gains config_version = 1 after
// its last top-level key. Should the line editor not follow the file's
// layout, the key goes on a line of its own at the very top, which is the
// top level of any TOML file.
func addVersion1(data []byte) ([]byte, error) {
	out, err := EditKeys(data, KeyEdit{Key: "config_version", Value: "1"})
	if err == nil {
		return out, nil
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	out = append([]byte("config_version = 1"+nl), data...)
	if v, err := fileVersion(out); err != nil || v != 1 {
		return nil, fmt.Errorf("add config_version = 1: %w", errors.Join(err, errors.New("the file's layout is beyond homard's editor")))
	}
	return out, nil
}

// fileVersion reads config_version from data: 0 when the file has none.
// An error means data is not TOML or the value is not an integer (the
// full decode reports that with its line), or it is negative.
func fileVersion(data []byte) (int64, error) {
	var v struct {
		Version *int64 `toml:"config_version"`
	}
	if _, err := toml.Decode(string(data), &v); err != nil {
		return 0, err
	}
	switch {
	case v.Version == nil:
		return 0, nil
	case *v.Version < 0:
		return 0, fmt.Errorf("config_version = %d: %w: want %d", *v.Version, errBadVersion, CurrentVersion)
	}
	return *v.Version, nil
}

// migrate returns data at CurrentVersion, the version it had and the
// steps applied. It reads no file and writes none. The error of a file
// that is not TOML is fileVersion's; a newer version wraps
// ErrNewerVersion.
func migrate(data []byte) (out []byte, from int, applied []MigrationStep, err error) {
	v, err := fileVersion(data)
	if err != nil {
		return nil, 0, nil, err
	}
	if v > CurrentVersion {
		return nil, 0, nil, fmt.Errorf("config_version = %d: %w, which reads versions up to %d: upgrade homard to read this file (a newer one wrote it)",
			v, ErrNewerVersion, CurrentVersion)
	}
	from, out = int(v), data
	for _, s := range steps()[from:] {
		if out, err = s.apply(out); err != nil {
			return nil, from, nil, fmt.Errorf("migrate config_version %d to %d: %w", s.from, s.from+1, err)
		}
		applied = append(applied, MigrationStep{From: s.from, Note: s.note})
	}
	return out, from, applied, nil
}

// MigrationStep is one step of a Migration, from version From to From+1.
type MigrationStep struct {
	From int
	// Note says in a few words what the step changes.
	Note string
}

func (s MigrationStep) String() string { return fmt.Sprintf("%d → %d: %s", s.From, s.From+1, s.Note) }

// Migration is what bringing one config file to CurrentVersion changes.
// PlanMigration makes it without writing; Apply writes it.
type Migration struct {
	// Path is the config file.
	Path string
	// From is the file's config_version (0: none written).
	From int
	// Steps are the steps that bring it to CurrentVersion, in order;
	// none when it is current.
	Steps []MigrationStep
	// Before is the file as read; After is it at CurrentVersion.
	Before, After []byte
}

// PlanMigration returns the migration of data, the text of the config
// file at path. It reads no file and writes none. A file of a newer
// version is an error wrapping ErrNewerVersion; a file that is not TOML,
// or whose config_version is not a whole number from 0, is an error too
// (Load says where).
func PlanMigration(path string, data []byte) (*Migration, error) {
	after, from, applied, err := migrate(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Migration{Path: path, From: from, Steps: applied, Before: data, After: after}, nil
}

// ReadMigration reads the config file at path, with Load's checks, and
// returns its migration. It writes nothing.
func ReadMigration(path string) (*Migration, error) {
	_, data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return PlanMigration(path, data)
}

// Needed reports whether the file is older than CurrentVersion.
func (m *Migration) Needed() bool { return m.From < CurrentVersion }

// BackupPath is where Apply keeps the file as it was: beside Path (the
// link, when Path is a symlink), named after the version it had
// ("config.toml.bak-v0").
func (m *Migration) BackupPath() string {
	return m.Path + ".bak-v" + strconv.Itoa(m.From)
}

// Summary is one line for the owner: the file, the versions and what
// the steps change.
func (m *Migration) Summary() string {
	notes := make([]string, len(m.Steps))
	for i, st := range m.Steps {
		notes[i] = st.Note
	}
	return fmt.Sprintf("%s: config_version %d → %d (%s)", m.Path, m.From, CurrentVersion, strings.Join(notes, "; "))
}

// WriteBackup writes Before to BackupPath with mode 0600 and returns the
// path. It never replaces a different file there (a backup of an older
// migration the owner may still need): that is an error saying to move it
// away. A backup with the same bytes is kept as it is.
func (m *Migration) WriteBackup() (string, error) {
	b := m.BackupPath()
	taken := m.backupTaken()
	old, err := os.ReadFile(b)
	switch {
	case err == nil && bytes.Equal(old, m.Before):
		return b, nil
	case err == nil:
		return "", taken
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("back up %s: %w", m.Path, err)
	}
	// writeFile without force never replaces a file, even one created
	// since the read above.
	if err := writeFile(b, m.Before, false); errors.Is(err, fs.ErrExist) {
		return "", taken
	} else if err != nil {
		return "", fmt.Errorf("back up %s: %w", m.Path, err)
	}
	return b, nil
}

func (m *Migration) backupTaken() error {
	return fmt.Errorf("back up %s: %s already exists and holds something else: move it away and run `homard config migrate`", m.Path, m.BackupPath())
}

// Check reports, writing nothing, what would stop Apply: the file does not
// load (the error names lines of the file as it is), or a different file
// is in the backup's place.
func (m *Migration) Check() error {
	if !m.Needed() {
		return nil
	}
	if _, err := Check(m.Path, m.Before); err != nil {
		return fmt.Errorf("migrate: %s does not load, so its migration would not be written: %w", m.Path, err)
	}
	if old, err := os.ReadFile(m.BackupPath()); err == nil && !bytes.Equal(old, m.Before) {
		return m.backupTaken()
	}
	return nil
}

// Apply writes the migration: first the backup (WriteBackup), then After
// in place of the file, atomically and only if it loads (WriteChecked). A
// symlinked config file is written through the link, which stays. The
// file must still hold Before: if it changed since it was read, Apply
// writes nothing and says so, unless it already holds After (another
// homard migrated it first). It returns the backup's path.
func (m *Migration) Apply() (string, error) {
	if !m.Needed() {
		return "", nil
	}
	target, err := filepath.EvalSymlinks(m.Path)
	if err != nil {
		return "", fmt.Errorf("migrate %s: %w", m.Path, err)
	}
	_, now, err := readFile(target)
	if err != nil {
		return "", fmt.Errorf("migrate %s: %w", m.Path, err)
	}
	if !bytes.Equal(now, m.Before) {
		if bytes.Equal(now, m.After) {
			return m.BackupPath(), nil
		}
		return "", fmt.Errorf("migrate %s: the file changed since homard read it; nothing was written: run `homard config migrate` again", m.Path)
	}
	backup, err := m.WriteBackup()
	if err != nil {
		return "", fmt.Errorf("migrate: %w (nothing was written)", err)
	}
	if _, err := WriteChecked(target, m.After); err != nil {
		return "", fmt.Errorf("migrate %s: %w", m.Path, err)
	}
	return backup, nil
}
