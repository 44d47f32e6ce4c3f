package app

import (
	"slices"

	"github.com/homard/homard/internal/egress"
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
func (r *Runtime) extensionProxy(client *egress.Client, what string, hosts, secretNames []string) (*egress.Proxy, error) {
	byHost := map[string]string{} // host as bound → secret name
	for _, name := range secretNames {
		for _, s := range r.Vault.List() {
			if s.Name != name {
				continue
			}
			for _, h := range s.Hosts {
				if _, taken := byHost[h]; !taken && slices.Contains(hosts, h) {
					byHost[h] = name
				}
			}
		}
	}
	log := r.logger()
	return client.NewProxyWith(hosts, egress.ProxyOptions{
		Credential: func(host string) (string, string, bool) {
			name, ok := byHost[host]
			if !ok {
				return "", "", false
			}
			header, value, err := r.Vault.Release(name, "https", host)
			if err != nil {
				log.Warn("egress proxy: secret not released", "extension", what, "secret", name, "host", host, "err", err)
				return "", "", false
			}
			return header, value, true
		},
		Log: func(rec egress.ProxyRecord) {
			log.Info("egress proxy", "extension", what, "method", rec.Method, "host", rec.Host,
				"credential", rec.Credential, "status", rec.Status)
		},
	})
}
