package extensions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/homard/homard/internal/egress"
	"github.com/homard/homard/internal/secrets"
)

// extensionProxy returns the egress proxy for one extension (what names it
// in the log: "skill NAME") reaching hosts. For each host the vault binds
// one of the declared secrets to, the proxy adds that secret's header to
// the extension's plain http:// requests, sent on over https: the value
// is released from the vault for each request, in homard's process, and
// never given to the extension (not in its environment, argv, files or a
// response). When two declared secrets are bound to one host, the first
// declared is used. Each request is logged with its host and whether a
// credential was added, never the value.
func (s *Service) extensionProxy(client *egress.Client, what string, hosts, secretNames []string) (*egress.Proxy, error) {
	byHost := map[string]string{} // host as bound → secret name
	for _, name := range secretNames {
		for _, sec := range s.o.Vault.List() {
			if sec.Name != name {
				continue
			}
			for _, h := range sec.Hosts {
				if _, taken := byHost[h]; !taken && slices.Contains(hosts, h) {
					byHost[h] = name
				}
			}
		}
	}
	log := s.logger()
	return client.NewProxyWith(hosts, egress.ProxyOptions{
		Credential: func(host string) (egress.Credential, bool) {
			name, ok := byHost[host]
			if !ok {
				return egress.Credential{}, false
			}
			header, value, err := s.o.Vault.Release(name, "https", host)
			var bare string
			if err == nil {
				bare, err = s.o.Vault.ReleaseValue(name, "https", host)
			}
			if err != nil {
				log.Warn("egress proxy: secret not released", "extension", what, "secret", name, "host", host, "err", err)
				return egress.Credential{}, false
			}
			// The response is scrubbed of the header's value and of the
			// bare secret in every form the redactor knows.
			return egress.Credential{Header: header, Value: value, Hide: secrets.Encodings(bare)}, true
		},
		Log: func(rec egress.ProxyRecord) {
			log.Info("egress proxy", "extension", what, "method", rec.Method, "host", rec.Host,
				"credential", rec.Credential, "status", rec.Status)
		},
	})
}

// checkExtensionSecrets refuses a secret that is not in the vault or is
// bound to none of hosts, saying how to fix it (skills have the same check
// in skill.Grant).
func (s *Service) checkExtensionSecrets(what string, hosts, secretNames []string) error {
	list := s.o.Vault.List()
	for _, name := range secretNames {
		i := slices.IndexFunc(list, func(sec secrets.Secret) bool { return sec.Name == name })
		if i < 0 {
			return fmt.Errorf("%s: secret %q is not in the vault; add it with `homard secret set %s --host HOST`", what, name, name)
		}
		if !slices.ContainsFunc(list[i].Hosts, func(h string) bool { return slices.Contains(hosts, h) }) {
			return fmt.Errorf("%s: secret %q is bound to none of its network hosts (%s); bind it with `homard secret set %s --host HOST`", what, name, strings.Join(hosts, ", "), name)
		}
	}
	return nil
}
