package postgres

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"halolang.dev/halo/host/runstore"
)

// migrate applies the steps the database lacks, in one transaction under an advisory lock,
// so replicas starting at once migrate once. A database migrated by a newer halo is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7236051901)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, runstore.PostgresDialect.SchemaTableSQL()); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM halo_schema`).Scan(&have); err != nil {
			return err
		}
		if have > runstore.SchemaVersion {
			return runstore.Errorf(runstore.CodeStore, "the store's schema is version %d, made by a newer halo; this one knows up to %d: upgrade halo", have, runstore.SchemaVersion)
		}
		for v := have + 1; v <= runstore.SchemaVersion; v++ {
			for _, st := range runstore.PostgresDialect.Migration(v) {
				if _, err := tx.Exec(ctx, st); err != nil {
					return fmt.Errorf("schema version %d: %w", v, err)
				}
			}
			if _, err := tx.Exec(ctx, `INSERT INTO halo_schema (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if _, ok := err.(*runstore.Error); ok {
			return err
		}
		return storeErr("migrate the store's schema", err)
	}
	return nil
}

// textIndex makes, once, the index a text query's words (search LIKE '%word%') are found
// with: a GIN index of pg_trgm's trigrams of the search text. pg_trgm ships with
// PostgreSQL, and since PostgreSQL 13 a user who may create in the database may add it;
// where it cannot be added, the store works without the index (a search for a rare word
// then reads every run) and says so in the log, once an open. Not a schema step: a store
// migrated without it gets it when one who may add it opens the store.
func textIndex(ctx context.Context, pool *pgxpool.Pool, log hclog.Logger) {
	var have bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('halo_runs_search_trgm') IS NOT NULL`).Scan(&have); err != nil || have {
		return
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7236051901)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_trgm`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE INDEX IF NOT EXISTS halo_runs_search_trgm ON halo_runs USING gin (search gin_trgm_ops)`)
		return err
	})
	if err != nil {
		log.Warn("run store: searches of the runs' text have no index (CREATE EXTENSION pg_trgm failed): a search for a word few runs hold reads every run; a user who may, can run CREATE EXTENSION pg_trgm in this database, and the next halo serve makes the index", "error", err)
	}
}
