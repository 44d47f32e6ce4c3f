//go:build postgres

package storetest

import (
	"os"

	"github.com/homard/homard/internal/store/pgstore"
)

func init() {
	base := os.Getenv(Env)
	if base == "" {
		return
	}
	fresh = func(tb TB) string {
		tb.Helper()
		url, drop, err := pgstore.NewSchema(tb.Context(), base)
		if err != nil {
			tb.Fatalf("new PostgreSQL schema: %v", err)
		}
		tb.Cleanup(func() {
			if err := drop(); err != nil {
				tb.Fatalf("drop PostgreSQL schema: %v", err)
			}
		})
		return url
	}
}
