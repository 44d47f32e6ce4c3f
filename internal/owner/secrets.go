package owner

import (
	"fmt"

	"github.com/homard/homard/internal/secrets"
)

// SecretSet stores a secret bound to hosts. The value comes from the
// caller's stdin, never from argv or the model. A secret with neither host
// nor channel whose name is a chat platform's, or a channel's
// token_secret, is refused with the --channel command that stores it.
func (o *Actions) SecretSet(s secrets.Secret, value []byte) error {
	if len(s.Hosts) == 0 && s.Channel == "" {
		if platform := o.d.ChannelOfSecret(s.Name); platform != "" {
			return fmt.Errorf("secret %s is a chat channel's token: store it for that channel only, with no host: homard secret set %s --channel %s", s.Name, s.Name, platform)
		}
	}
	return o.d.Vault.Set(s, value)
}

// SecretList lists names and bindings only.
func (o *Actions) SecretList() []secrets.Secret { return o.d.Vault.List() }

// SecretRemove deletes a secret.
func (o *Actions) SecretRemove(name string) error { return o.d.Vault.Remove(name) }
