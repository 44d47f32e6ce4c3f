package config

import (
	"net/url"
	"strings"
)

// Store says where homard keeps its state (issue 27).
type Store struct {
	// URL is a postgres:// (or postgresql://) URL of a shared PostgreSQL
	// database, which a homard built with -tags postgres opens; "" (the
	// default) keeps everything in the SQLite file data/homard.db. Its
	// password never goes here (the file is config, often copied):
	// PGPASSWORD or ~/.pgpass give it. HOMARD_STORE_URL, when set, takes
	// this key's place.
	URL string `toml:"url"`
}

// StoreEnv is the variable that overrides store.url.
const StoreEnv = "HOMARD_STORE_URL"

func validateStore(s *Store, ps *problems) {
	if s.URL == "" {
		return
	}
	u, err := url.Parse(s.URL)
	switch {
	case err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql"):
		ps.add(`store.url: want a PostgreSQL URL such as "postgres://homard@db.example/homard", or "" for the SQLite file`)
	case hasPassword(u):
		ps.add("store.url holds a password; remove it and give it in PGPASSWORD or ~/.pgpass (the config file is not a place for secrets)")
	}
}

func hasPassword(u *url.URL) bool {
	if _, set := u.User.Password(); set {
		return true
	}
	return u.Query().Has("password")
}

func renderStore(w func(string, ...any), s *Store) {
	w(`
[store]
# A shared PostgreSQL database, such as "postgres://homard@db.example/homard",
# for a homard built with -tags postgres; "" (the default) keeps everything
# in data/homard.db (SQLite). The password goes in PGPASSWORD or
# ~/.pgpass, never here. HOMARD_STORE_URL overrides this.
url = %s
`, quote(s.URL))
}

// StoreURL returns where the store lives and how to name it in a message:
// override when set (HOMARD_STORE_URL, which only cmd/homard reads), else
// store.url, else the SQLite file dbFile. The name never holds a user's
// password.
func (c *Config) StoreURL(dbFile, override string) (where, name string) {
	where = c.Store.URL
	if override != "" {
		where = override
	}
	if where == "" {
		return dbFile, dbFile
	}
	u, err := url.Parse(where)
	if err != nil || u.Host == "" && !strings.Contains(u.RawQuery, "host=") {
		return where, "the " + StoreEnv + " or store.url database"
	}
	name = u.Host + u.Path
	if u.Host == "" {
		name = u.Path + " (local socket)"
	}
	return where, "PostgreSQL " + strings.TrimPrefix(name, "/")
}
