package app

import (
	"fmt"
	"sort"

	"github.com/homard/homard/internal/secrets"
)

// Secret is a vault entry as people see it: name and binding, never value.
type Secret = secrets.Secret

// SecretSet stores a secret bound to hosts. The value comes from the
// caller's stdin, never from argv or the model. A secret with neither host
// nor channel whose name is a chat platform's, or a channel's
// token_secret, is refused with the --channel command that stores it.
func (r *Runtime) SecretSet(s Secret, value []byte) error {
	if len(s.Hosts) == 0 && s.Channel == "" {
		if platform := r.channelOfSecret(s.Name); platform != "" {
			return fmt.Errorf("secret %s is a chat channel's token: store it for that channel only, with no host: homard secret set %s --channel %s", s.Name, s.Name, platform)
		}
	}
	return r.Vault.Set(s, value)
}

// channelOfSecret names the platform whose token s is: the one that
// names it in token_secret or encrypt_key_secret, or whose name it is.
func (r *Runtime) channelOfSecret(name string) string {
	byName := r.Config.Channels.ByName()
	platforms := make([]string, 0, len(byName))
	for p := range byName {
		platforms = append(platforms, p)
	}
	sort.Strings(platforms)
	for _, p := range platforms {
		ch := byName[p]
		if name == p || name == ch.TokenSecret || name == ch.EncryptKeySecret {
			return p
		}
	}
	return ""
}

// SecretList lists names and bindings only.
func (r *Runtime) SecretList() []Secret { return r.Vault.List() }

// SecretRemove deletes a secret.
func (r *Runtime) SecretRemove(name string) error { return r.Vault.Remove(name) }
