package app

import (
	"sort"

	"github.com/homard/homard/internal/secrets"
)

// Secret is a vault entry as people see it: name and binding, never value.
type Secret = secrets.Secret

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
