//go:build postgres

package pgstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	neturl "net/url"
	"strings"

	"github.com/homard/homard/internal/store/engine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

//go:embed migrations/*.sql
var migrations embed.FS

func init() { engine.Register(Engine(), "postgres", "postgresql") }

// channelOf is the NOTIFY channel of the topic given as the query's first
// parameter, in this schema: channels are one space per database, and a
// name is at most 63 bytes. Any role of the database may LISTEN to any
// channel, so an announcement's payload is always empty (store.Listen).
const channelOf = `'homard_' || left(md5(current_schema()), 16) || '_' || CAST(? AS TEXT)`

// Engine returns the PostgreSQL engine.
func Engine() *engine.Engine {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the folder is embedded above
	}
	return &engine.Engine{
		Name:       "PostgreSQL",
		Open:       open,
		Begin:      []string{"BEGIN", writeLock},
		Bootstrap:  bootstrap,
		Migrations: sub,
		Baseline:   33,
		Queries:    queries,
		Match:      Match,
		RunLocks:   newRunLocks,
		Check:      check,
		Listen:     listen,
		Plain:      plain,
	}
}

// queries are the store's named queries in PostgreSQL's text.
var queries = map[string]string{
	"schema_migrations": `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		name       TEXT   NOT NULL,
		applied_at BIGINT NOT NULL
	)`,
	"memory.clear":    `DELETE FROM memory_fts`,
	"memory.optimize": `SELECT 1`, // a GIN index needs no merging
	"memory.match":    `memory_fts.tsv @@ CAST(? AS tsquery)`,
	"memory.rank":     `ts_rank(memory_fts.tsv, CAST(?1 AS tsquery)) DESC`,
	// An announcement (store.Listen): its channel is the deployment's.
	"notify": `SELECT pg_notify(` + channelOf + `, ?)`,
	// store.Copy's introspection.
	"columns": `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position`,
	"identities": `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND is_identity = 'YES' AND identity_generation = 'BY DEFAULT'`,
}

// Match is the tsquery of terms: each one a quoted lexeme (so an operator
// in a term is only text), joined by & — or | with anyTerm.
func Match(terms []string, anyTerm bool) string {
	sep := " & "
	if anyTerm {
		sep = " | "
	}
	q := make([]string, len(terms))
	for i, t := range terms {
		t = strings.ReplaceAll(t, `\`, `\\`)
		q[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	return strings.Join(q, sep)
}

// open connects to url through pgx's database/sql driver, with every
// statement translated (Translate), and checks that the server answers.
// A readOnly pool's sessions refuse writes (default_transaction_read_only),
// as SQLite's reader pool does with query_only.
func open(ctx context.Context, url string, readOnly bool) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// pgx's message masks the password.
		return nil, fmt.Errorf("the store URL: %w", err)
	}
	if readOnly {
		cfg.RuntimeParams["default_transaction_read_only"] = "on"
	}
	db := sql.OpenDB(connector{stdlib.GetConnector(*cfg)})
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s:%d as %s: %w", cfg.Host, cfg.Port, cfg.User, err)
	}
	return db, nil
}

// plain opens a pool through pgx's database/sql driver as it is, with
// the configuration of db's connections (one of open's pools: the URL's
// server, credentials and runtime parameters, search_path included, so
// the pool is in the store's schema) less the reader's read-only setting.
// Nothing is translated: a library's own $n would be renumbered, and its
// ? operators on jsonb taken for parameters.
func plain(ctx context.Context, db *sql.DB) (*sql.DB, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	var cfg *pgx.ConnConfig
	err = c.Raw(func(dc any) error {
		pc, ok := dc.(*conn)
		if !ok {
			return fmt.Errorf("a %T connection", dc)
		}
		cfg = pc.Conn.Conn().Config() // a copy
		return nil
	})
	c.Close()
	if err != nil {
		return nil, err
	}
	delete(cfg.RuntimeParams, "default_transaction_read_only")
	p := stdlib.OpenDB(*cfg)
	if err := p.PingContext(ctx); err != nil {
		p.Close()
		return nil, fmt.Errorf("connect to %s:%d as %s: %w", cfg.Host, cfg.Port, cfg.User, err)
	}
	return p, nil
}

// connector hands out connections that translate every statement.
type connector struct{ driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := dc.(*stdlib.Conn)
	if !ok {
		dc.Close()
		return nil, fmt.Errorf("pgx's driver returned a %T", dc)
	}
	return &conn{pc}, nil
}

// conn is pgx's connection, every optional interface of database/sql
// included (they are promoted), with the statements translated.
type conn struct{ *stdlib.Conn }

// CheckNamedValue passes a bool as the 0 or 1 homard's INTEGER flag
// columns hold (SQLite's driver does the same; pgx refuses a bool for a
// bigint), and everything else to pgx as it is.
func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		nv.Value = int64(0)
		if b {
			nv.Value = int64(1)
		}
	}
	return nil
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.Conn.Prepare(Translate(query))
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, Translate(query))
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, Translate(query), args)
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, Translate(query), args)
}

// check reports the data-page checksum failures the server counted in
// this database (none when checksums are off): PostgreSQL checks its own
// structure as it reads, and enforces foreign keys on every write.
func check(ctx context.Context, db *sql.DB) ([]string, error) {
	var failures sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT checksum_failures FROM pg_stat_database WHERE datname = current_database()`).Scan(&failures)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if failures.Int64 > 0 {
		return []string{fmt.Sprintf("PostgreSQL counted %d data page checksum failures in this database", failures.Int64)}, nil
	}
	return nil, nil
}

// NewSchema creates an empty schema with a random name in the database at
// base and returns base's URL with that schema as its search_path, and a
// function that drops the schema and everything in it. It is for tests
// (package storetest): every test a database of its own, in one cluster.
func NewSchema(ctx context.Context, base string) (url string, drop func() error, err error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	schema := "t_" + hex.EncodeToString(b)
	u, err := neturl.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("the base URL: %w", err)
	}
	admin, err := open(ctx, base, false)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), func() error {
		defer admin.Close()
		_, err := admin.ExecContext(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
		return err
	}, nil
}

// listen LISTENs to topic's channel on a connection of its own and calls
// fn with each notification's payload until stop is called, which ends
// the wait, closes the connection (it is not returned to the pool
// half-listening) and returns once it is released: database/sql keeps
// the connection locked while Raw lends it out, and a pool closing a
// statement prepared on it would wait for that lock for ever.
func listen(db *sql.DB, topic string, fn func(string)) (func(), error) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := db.Conn(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	var channel string
	if err := c.QueryRowContext(ctx, `SELECT `+channelOf, topic).Scan(&channel); err != nil {
		cancel()
		c.Close()
		return nil, err
	}
	if _, err := c.ExecContext(ctx, `LISTEN `+pgx.Identifier{channel}.Sanitize()); err != nil {
		cancel()
		c.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		_ = c.Raw(func(dc any) error {
			pc, ok := dc.(*conn)
			if !ok {
				return fmt.Errorf("listen: a %T connection", dc)
			}
			for {
				n, err := pc.Conn.Conn().WaitForNotification(ctx)
				if err != nil {
					// stop was called or the session ended; a failed
					// wait leaves the connection unusable, so it is
					// closed rather than pooled.
					_ = pc.Close()
					return driver.ErrBadConn
				}
				fn(n.Payload)
			}
		})
	}()
	return func() { cancel(); <-done }, nil
}
