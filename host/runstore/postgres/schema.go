package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"halolang.dev/halo/host/runstore"
)

// migrations are the schema, one step a version; never change a step that has shipped, add
// one. Records and events are JSON text, not jsonb: jsonb refuses the \u0000 escape a model's
// answer may hold.
var migrations = []string{
	`CREATE TABLE halo_runs (
  id text PRIMARY KEY,
  pipeline text NOT NULL,
  status text NOT NULL,
  waiting_for text NOT NULL DEFAULT '',
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  started timestamptz NOT NULL,
  updated timestamptz NOT NULL,
  record text NOT NULL,
  owner text,
  lease_until timestamptz,
  cancel_requested boolean NOT NULL DEFAULT false
);
CREATE INDEX halo_runs_newest ON halo_runs (started DESC, id DESC);
CREATE INDEX halo_runs_running ON halo_runs (lease_until) WHERE status = 'running';
CREATE INDEX halo_runs_owner ON halo_runs (owner) WHERE owner IS NOT NULL;
CREATE TABLE halo_events (
  run_id text NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE halo_signals (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  channel text NOT NULL,
  payload text NOT NULL,
  via text NOT NULL,
  owner text NOT NULL,
  at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE halo_links (
  id text PRIMARY KEY,
  run_id text NOT NULL,
  used timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE halo_secrets (
  name text PRIMARY KEY,
  value bytea NOT NULL
);`,
	// 2: what a list shows of each run beside its status (Studio, GET /api/runs).
	`ALTER TABLE halo_runs ADD COLUMN cost double precision NOT NULL DEFAULT 0,
  ADD COLUMN violations integer NOT NULL DEFAULT 0;`,
}

// migrate applies the steps the database lacks, in one transaction under an advisory lock,
// so replicas starting at once migrate once. A database migrated by a newer halo is refused.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7236051901)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS halo_schema (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM halo_schema`).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return runstore.Errorf(runstore.CodeStore, "the store's schema is version %d, made by a newer halo; this one knows up to %d: upgrade halo", have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("schema version %d: %w", v, err)
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
