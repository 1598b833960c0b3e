// Package sqlitedb opens Halo's SQLite databases (the run store's and the stores'), so that
// both open them one way: through github.com/ncruces/go-sqlite3, SQLite compiled to
// WebAssembly and that translated to Go (no cgo, so release builds stay CGO_ENABLED=0, and
// one SQLite in the binary), every connection with FTS5.
package sqlitedb

import (
	"database/sql"

	"github.com/ncruces/go-sqlite3"
	"github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"
)

// Open opens the database dsn names (a file: URI with the driver's _pragma and _txlock
// parameters). When defensive, each connection is in SQLite's defensive mode: ordinary SQL
// cannot write a virtual table's own tables (FTS5's), nor corrupt the file. Each
// connection's memory is its own, so two connections work on two cores.
func Open(dsn string, defensive bool) (*sql.DB, error) {
	return driver.Open(dsn, func(c *sqlite3.Conn) error {
		if err := fts5.Register(c); err != nil {
			return err
		}
		_, err := c.Config(sqlite3.DBCONFIG_DEFENSIVE, defensive)
		return err
	})
}
