package postgres

import (
	"context"
	"fmt"

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
