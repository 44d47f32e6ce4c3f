package secrets

import (
	"crypto/hkdf"
	"crypto/sha256"
	"errors"
	"fmt"
)

// ErrKeyPurpose: DerivedKey was asked for a key without a purpose.
var ErrKeyPurpose = errors.New("a derived key needs a purpose of 1-64 characters of a-z, 0-9, dot, underscore and hyphen")

// derivedKeyLen is the length of a derived key: 32 bytes, the size of an
// HMAC-SHA-256 block's natural key and of an AES-256 key.
const derivedKeyLen = 32

// extract runs HKDF-Extract (RFC 5869) over the vault key once, at open.
// No salt: the vault key is already 32 uniformly random bytes, which is
// the case RFC 5869 §3.1 says needs none.
func extract(key []byte) ([]byte, error) {
	return hkdf.Extract(sha256.New, key, nil)
}

// DerivedKey returns a 32-byte key for one purpose ("tasks" for the
// sealed task bodies), derived from the vault key with HKDF-SHA-256 and
// info "homard/" + purpose. It is computed on each call and stored
// nowhere: whoever can write the database but not read the vault key
// cannot compute it. The same vault key always gives the same key for a
// purpose; another purpose or another vault key gives an unrelated one.
func (v *Vault) DerivedKey(purpose string) ([]byte, error) {
	if !validPurpose(purpose) {
		return nil, fmt.Errorf("derive key %q: %w", purpose, ErrKeyPurpose)
	}
	k, err := hkdf.Expand(sha256.New, v.prk, "homard/"+purpose, derivedKeyLen)
	if err != nil {
		return nil, fmt.Errorf("derive key %s: %w", purpose, err)
	}
	return k, nil
}

// validPurpose keeps purposes to plain names, so "a" and "a\x00" or a
// purpose with a "/" cannot collide with another's info string.
func validPurpose(p string) bool {
	if len(p) == 0 || len(p) > 64 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
