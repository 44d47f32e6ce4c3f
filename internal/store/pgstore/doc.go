// Package pgstore is homard's PostgreSQL engine (issue 27): it registers
// itself with package engine for postgres:// and postgresql:// URLs, so
// that store.OpenURL opens a shared database instead of a SQLite file.
//
// Only a homard built with -tags postgres holds it (pgx adds 3.9 MB, which
// the default binary's 25 MB limit has no room for); Translate and the
// schema are built and tested in every build. The store's queries are
// SQLite's dialect: the engine's connections translate their parameters
// (Translate), the schema defines the two SQLite idioms they use (instr()
// and unary + on text), and the engine gives its own text for the queries
// a second database cannot take as they are (full-text search). Writes are
// serialised across every process on the store by a lock on one of its
// tables (LOCK TABLE schema_migrations IN EXCLUSIVE MODE), as SQLite's
// BEGIN IMMEDIATE serialises them on one file; run and session locks are
// rows of its held_locks naming the session that holds each, free once
// that session has ended — when the process holding it dies. Every lock is
// on the store's own tables, so only the store's role can take one: the
// advisory locks used before were one space for every role of the
// database (locks.go).
package pgstore
