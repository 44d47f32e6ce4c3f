package app

import (
	"github.com/homard/homard/internal/secrets"
)

// Secret is a vault entry as people see it: name and binding, never value.
type Secret = secrets.Secret

// SecretSet stores a secret bound to hosts. The value comes from the
// caller's stdin, never from argv or the model.
func (r *Runtime) SecretSet(s Secret, value []byte) error { return r.Vault.Set(s, value) }

// SecretList lists names and bindings only.
func (r *Runtime) SecretList() []Secret { return r.Vault.List() }

// SecretRemove deletes a secret.
func (r *Runtime) SecretRemove(name string) error { return r.Vault.Remove(name) }
