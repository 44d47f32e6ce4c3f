//go:build postgres

package main

// A test binary built with -tags postgres has the PostgreSQL engine
// (postgres.go), and so does the homard buildHomard builds for it: with
// HOMARD_TEST_POSTGRES set, the test homes keep their state there
// (store_test.go).
func init() { postgresBuild = true }
