//go:build postgres

package main

// A homard built with -tags postgres opens postgres:// store URLs
// (store.url, HOMARD_STORE_URL; issue 27).
import _ "github.com/homard/homard/internal/store/pgstore"
