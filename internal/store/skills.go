package store

import (
	"context"
	"fmt"
	"time"
)

// SkillTrust is the tree hash of a skill the owner accepted.
type SkillTrust struct {
	Name      string
	Hash      string // hex SHA-256 of the skill's tree
	TrustedAt time.Time
}

func scanSkillTrust(sc interface{ Scan(...any) error }) (SkillTrust, error) {
	var t SkillTrust
	var at int64
	if err := sc.Scan(&t.Name, &t.Hash, &at); err != nil {
		return SkillTrust{}, err
	}
	t.TrustedAt = time.Unix(0, at).UTC()
	return t, nil
}

// PutSkillTrust records (or replaces) the trusted hash of a skill.
func (tx *Tx) PutSkillTrust(t SkillTrust) error {
	_, err := tx.exec(`INSERT INTO skill_trust (name, hash, trusted_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET hash = excluded.hash, trusted_at = excluded.trusted_at`,
		t.Name, t.Hash, nanos(t.TrustedAt))
	if err != nil {
		return fmt.Errorf("trust skill %s: %w", t.Name, err)
	}
	return nil
}

// DeleteSkillTrust forgets a skill's trusted hash; it is not an error
// when there is none.
func (tx *Tx) DeleteSkillTrust(name string) error {
	if _, err := tx.exec(`DELETE FROM skill_trust WHERE name = ?`, name); err != nil {
		return fmt.Errorf("forget skill %s: %w", name, err)
	}
	return nil
}

// SkillTrust returns a skill's trusted hash, or ErrNotFound.
func (s *Store) SkillTrust(ctx context.Context, name string) (SkillTrust, error) {
	t, err := scanSkillTrust(s.readRow(ctx, `SELECT name, hash, trusted_at FROM skill_trust WHERE name = ?`, name))
	return one(t, err, "get skill trust", name)
}

// SkillTrusts returns every trusted skill hash, by name.
func (s *Store) SkillTrusts(ctx context.Context) ([]SkillTrust, error) {
	return readAll(ctx, s, "list skill trust", scanSkillTrust, `SELECT name, hash, trusted_at FROM skill_trust ORDER BY name`)
}
