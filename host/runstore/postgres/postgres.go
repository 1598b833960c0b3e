// Package postgres is the run store several `halo serve` replicas share: runs, their live
// events, the signals that continued them, used approval links and the approval key, in one
// PostgreSQL database through github.com/jackc/pgx/v5. The schema is made and migrated when
// a store opens. A paused run is continued by exactly one replica (a conditional UPDATE
// takes it); a running run is held by its replica under a lease it renews, and any replica
// fails a run whose lease ran out with HOST_LOST; every change is announced with NOTIFY so
// the other replicas' event streams and cancellations follow.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// DefaultLease is how long a run stays held without its replica renewing it.
const DefaultLease = 30 * time.Second

// channel is the NOTIFY channel; a payload is "<runId> <kind>".
const channel = "halo_runs"

// Options are the optional parts of Open.
type Options struct {
	// Owner names this replica in the runs it holds; "" means host name, process id and a
	// random suffix.
	Owner string
	// Lease is how long a run stays held without renewal; 0 means DefaultLease. Keep is to
	// be called several times per lease.
	Lease time.Duration
	// MaxConns bounds the connection pool; 0 means 32.
	MaxConns int32
	// Logger gets reconnections of the notification listener; nil means none.
	Logger hclog.Logger
	// Now is the clock for records this store writes itself (lost runs); nil means time.Now.
	// Leases use the database's clock, which every replica shares.
	Now func() time.Time
}

// A Store is a run store in PostgreSQL.
type Store struct {
	pool  *pgxpool.Pool
	cfg   *pgx.ConnConfig
	owner string
	lease time.Duration
	log   hclog.Logger
	now   func() time.Time
}

var _ runstore.Store = (*Store)(nil)

// Open connects to the database at url (postgres://...), applies the schema migrations this
// version knows, and returns the store.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, storeErr("the store URL is not a PostgreSQL connection URL", err)
	}
	pcfg.MaxConns = opts.MaxConns
	if pcfg.MaxConns <= 0 {
		pcfg.MaxConns = 32
	}
	s := &Store{owner: opts.Owner, lease: opts.Lease, log: opts.Logger, now: opts.Now, cfg: pcfg.ConnConfig.Copy()}
	if s.owner == "" {
		host, _ := os.Hostname()
		var b [4]byte
		rand.Read(b[:])
		s.owner = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
	}
	if s.lease <= 0 {
		s.lease = DefaultLease
	}
	if s.log == nil {
		s.log = hclog.NewNullLogger()
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.pool, err = pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, storeErr("cannot connect to the store", err)
	}
	if err := migrate(ctx, s.pool); err != nil {
		s.pool.Close()
		return nil, err
	}
	textIndex(ctx, s.pool, s.log)
	return s, nil
}

// Owner is the name this replica holds runs under.
func (s *Store) Owner() string { return s.owner }

// Close closes the pool.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

func storeErr(what string, err error) error {
	return &runstore.Error{Code: runstore.CodeStore, Message: fmt.Sprintf("%s: %v", what, err), Err: err}
}

// bg is the context of the runtime's store calls, which carry none.
func bg() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

func notFound(id string) error {
	return &runstore.Error{Code: runtime.CodeRun, Message: fmt.Sprintf("no run %s", trunc(id, 130)), Err: runstore.ErrNotFound}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Load reads run id's record.
func (s *Store) Load(id string) (*runtime.Record, error) {
	ctx, cancel := bg()
	defer cancel()
	return s.load(ctx, s.pool, id)
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) load(ctx context.Context, q querier, id string) (*runtime.Record, error) {
	var status string
	var raw []byte
	err := q.QueryRow(ctx, `SELECT status, record FROM halo_runs WHERE id = $1`, id).Scan(&status, &raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, &runstore.Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: %v", id, err), Err: err}
	}
	var rec runtime.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, &runstore.Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: unreadable record: %v", id, err), Err: err}
	}
	rec.Status = runtime.Status(status)
	return &rec, nil
}

// Save writes rec. A run held by another replica (or lost, and failed by one) is refused
// with CodeTaken. A run that stops releases its hold and its live events.
func (s *Store) Save(rec *runtime.Record) error {
	ctx, cancel := bg()
	defer cancel()
	raw, err := runstore.MarshalRecord(rec)
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	c := runstore.ColumnsOf(rec)
	var owner any
	if rec.Status == runtime.Running {
		owner = s.owner
	}
	tag, err := s.pool.Exec(ctx, `
WITH up AS (
  INSERT INTO halo_runs AS r (id, pipeline, status, waiting_for, error_code, error_message, started, updated, record, owner, lease_until, cost, violations, file, search, tokens_in, tokens_out, unpriced)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10::text IS NULL THEN NULL ELSE now() + $11::interval END, $13, $14, $15, $16, $17, $18, $19)
  ON CONFLICT (id) DO UPDATE SET pipeline = EXCLUDED.pipeline, status = EXCLUDED.status,
    waiting_for = EXCLUDED.waiting_for, error_code = EXCLUDED.error_code, error_message = EXCLUDED.error_message,
    cost = EXCLUDED.cost, violations = EXCLUDED.violations, file = EXCLUDED.file, search = EXCLUDED.search,
    tokens_in = EXCLUDED.tokens_in, tokens_out = EXCLUDED.tokens_out, unpriced = EXCLUDED.unpriced,
    updated = EXCLUDED.updated, record = EXCLUDED.record, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until,
    cancel_requested = r.cancel_requested AND EXCLUDED.status = 'running'
  WHERE r.owner = $12
  RETURNING id, status
), gone AS (
  DELETE FROM halo_events e USING up WHERE e.run_id = up.id AND up.status IN ('completed', 'failed')
)
SELECT pg_notify('`+channel+`', up.id || ' saved') FROM up`,
		rec.RunID, rec.Pipeline, c.Status, c.Waiting, c.ErrCode, c.ErrMsg, rec.Started, rec.Updated, string(raw), owner, s.lease.String(), s.owner,
		rec.Meta.Cost, len(rec.Meta.Violations), c.File, c.Search, c.TokensIn, c.TokensOut, c.Unpriced)
	if err != nil {
		return storeErr("run "+rec.RunID+": save record", err)
	}
	if tag.RowsAffected() == 0 {
		return runstore.Errorf(runstore.CodeTaken, "run %s is held by another replica, or was failed as lost: this replica's record of it was not saved", rec.RunID)
	}
	return nil
}

// Latest returns the most recently updated paused run.
func (s *Store) Latest() (string, error) {
	ctx, cancel := bg()
	defer cancel()
	var id string
	err := s.pool.QueryRow(ctx, `SELECT id FROM halo_runs WHERE status = 'paused' AND `+runstore.UnfinishedRuns+` ORDER BY updated DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", runstore.Errorf(runtime.CodeRun, "no paused run in the store")
	}
	if err != nil {
		return "", storeErr("latest paused run", err)
	}
	return id, nil
}

// Start saves the record of a run that starts, held by this replica.
func (s *Store) Start(ctx context.Context, rec *runtime.Record) error {
	raw, err := runstore.MarshalRecord(rec)
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	c := runstore.ColumnsOf(rec)
	tag, err := s.pool.Exec(ctx, `
INSERT INTO halo_runs (id, pipeline, status, started, updated, record, owner, lease_until, cost, violations, file, search, tokens_in, tokens_out, unpriced)
VALUES ($1, $2, 'running', $3, $4, $5, $6, now() + $7::interval, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (id) DO NOTHING`,
		rec.RunID, rec.Pipeline, rec.Started, rec.Updated, string(raw), s.owner, s.lease.String(), rec.Meta.Cost, len(rec.Meta.Violations), rec.File, c.Search, c.TokensIn, c.TokensOut, c.Unpriced)
	if err != nil {
		return storeErr("run "+rec.RunID+": start", err)
	}
	if tag.RowsAffected() == 0 {
		return runstore.Errorf(runstore.CodeTaken, "run %s exists already", rec.RunID)
	}
	return nil
}

// Claim takes paused run rec for this replica with one conditional UPDATE: it matches only
// while the run is paused with the record rec was loaded from, so of concurrent claims on
// any replicas exactly one changes the row. The signal is logged with it.
func (s *Store) Claim(ctx context.Context, rec *runtime.Record, sig runstore.Signal) error {
	running := *rec
	running.Status = runtime.Running
	raw, err := runstore.MarshalRecord(&running)
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	payload, err := json.Marshal(sig.Payload)
	if err != nil {
		payload = []byte("null")
	}
	var n int
	err = s.pool.QueryRow(ctx, `
WITH up AS (
  UPDATE halo_runs SET status = 'running', waiting_for = '', record = $2, owner = $3,
    lease_until = now() + $4::interval, cancel_requested = false
  WHERE id = $1 AND status = 'paused' AND updated = $5
  RETURNING id
), sig AS (
  INSERT INTO halo_signals (run_id, channel, payload, via, owner) SELECT id, $6, $7, $8, $3 FROM up
)
SELECT count(*) FROM up`,
		rec.RunID, string(raw), s.owner, s.lease.String(), rec.Updated, sig.Channel, string(payload), sig.Via).Scan(&n)
	if err != nil {
		return storeErr("run "+rec.RunID+": claim", err)
	}
	if n == 1 {
		return nil
	}
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM halo_runs WHERE id = $1)`, rec.RunID).Scan(&exists); err == nil && !exists {
		return notFound(rec.RunID)
	}
	return runstore.Errorf(runstore.CodeTaken, "run %s is no longer paused as it was: another signal continued it first", rec.RunID)
}

// AppendEvent keeps event seq of a run and announces it.
func (s *Store) AppendEvent(ctx context.Context, runID string, seq int, e runtime.Event) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
WITH ins AS (
  INSERT INTO halo_events (run_id, seq, event) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING run_id
)
SELECT pg_notify('`+channel+`', run_id || ' event') FROM ins`, runID, seq, string(raw))
	if err != nil {
		return storeErr("run "+runID+": event", err)
	}
	return nil
}

// Events returns run id's events after number after: from the live events while it runs,
// from its record once it has stopped.
func (s *Store) Events(ctx context.Context, id string, after int) ([]runtime.Event, runtime.Status, error) {
	var status string
	err := s.pool.QueryRow(ctx, `SELECT status FROM halo_runs WHERE id = $1`, id).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", notFound(id)
	}
	if err != nil {
		return nil, "", storeErr("run "+id+": events", err)
	}
	if after < 0 {
		after = 0
	}
	if runtime.Status(status) == runtime.Running {
		rows, err := s.pool.Query(ctx, `SELECT event FROM halo_events WHERE run_id = $1 AND seq > $2 ORDER BY seq`, id, after)
		if err != nil {
			return nil, "", storeErr("run "+id+": events", err)
		}
		evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runtime.Event, error) {
			var raw []byte
			var e runtime.Event
			if err := row.Scan(&raw); err != nil {
				return e, err
			}
			return e, json.Unmarshal(raw, &e)
		})
		if err != nil {
			return nil, "", storeErr("run "+id+": events", err)
		}
		return evs, runtime.Running, nil
	}
	rec, err := s.load(ctx, s.pool, id)
	if err != nil {
		return nil, "", err
	}
	if after > len(rec.Events) {
		after = len(rec.Events)
	}
	return rec.Events[after:], rec.Status, nil
}

// List returns a page of the runs q selects, newest first.
func (s *Store) List(ctx context.Context, q runstore.Query) (runstore.Page, error) {
	sql, args, err := runstore.PostgresDialect.ListSQL(q, func(t time.Time) any { return t })
	if err != nil {
		return runstore.Page{}, err
	}
	// Planned for each query's own words (an unnamed statement), not once for any: a plan
	// made without them reads the runs newest first, which for a rare word is every run,
	// where the words' own plan reads the search text's index.
	if len(q.Words()) > 0 {
		args = append([]any{pgx.QueryExecModeExec}, args...)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return runstore.Page{}, storeErr("list runs", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runstore.Summary, error) {
		var c runstore.Columns
		err := row.Scan(&c.ID, &c.File, &c.Pipeline, &c.Status, &c.Waiting, &c.ErrCode, &c.ErrMsg, &c.Started, &c.Updated, &c.Cost, &c.Violations, &c.TokensIn, &c.TokensOut, &c.Unpriced)
		return c.Summary(), err
	})
	if err != nil {
		return runstore.Page{}, storeErr("list runs", err)
	}
	return runstore.PageOf(q, runs), nil
}

// Delete removes the runs ids and what the store keeps of them, in one transaction.
func (s *Store) Delete(ctx context.Context, ids []string) ([]string, error) {
	var gone []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		gone = nil
		for _, id := range ids {
			var status string
			err := tx.QueryRow(ctx, `SELECT status FROM halo_runs WHERE id = $1 FOR UPDATE`, id).Scan(&status)
			if errors.Is(err, pgx.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if status == string(runtime.Running) {
				return runstore.Errorf(runstore.CodeRunning, "run %s is running: it can be removed once it stops (nothing was removed)", id)
			}
			for _, st := range runstore.DeleteRun {
				if _, err := tx.Exec(ctx, st, id); err != nil {
					return err
				}
			}
			gone = append(gone, id)
		}
		return nil
	})
	if err != nil {
		if _, ok := err.(*runstore.Error); ok {
			return nil, err
		}
		return nil, storeErr("remove runs", err)
	}
	return gone, nil
}

// Prune removes the finished runs p selects, 500 to a transaction.
func (s *Store) Prune(ctx context.Context, p runstore.Prune) (int, error) {
	sql, args := runstore.PruneSQL(runstore.PostgresDialect, p, func(t time.Time) any { return t })
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return 0, storeErr("prune runs", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, storeErr("prune runs", err)
	}
	gone := 0
	for len(ids) > 0 {
		n := min(len(ids), 500)
		done, err := s.Delete(ctx, ids[:n])
		gone += len(done)
		if err != nil {
			return gone, err
		}
		ids = ids[n:]
	}
	return gone, nil
}

// SealKey returns the key paused records are sealed with, derived from the key every
// replica shares.
func (s *Store) SealKey() ([]byte, error) {
	ctx, cancel := bg()
	defer cancel()
	key, err := s.Secret(ctx, runstore.NewKey)
	if err != nil {
		return nil, err
	}
	return runstore.DeriveSealKey(key), nil
}

// Keep renews this replica's leases and returns the runs someone asked to cancel.
func (s *Store) Keep(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `UPDATE halo_runs SET lease_until = now() + $2::interval
WHERE owner = $1 AND status = 'running' RETURNING id, cancel_requested`, s.owner, s.lease.String())
	if err != nil {
		return nil, storeErr("renew leases", err)
	}
	type held struct {
		id     string
		cancel bool
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (held, error) {
		var h held
		return h, row.Scan(&h.id, &h.cancel)
	})
	if err != nil {
		return nil, storeErr("renew leases", err)
	}
	var cancel []string
	for _, h := range runs {
		if h.cancel {
			cancel = append(cancel, h.id)
		}
	}
	return cancel, nil
}

// Expire fails every running run whose lease ran out, with its live events kept in its
// record, and announces each. Replicas may call it at once: each run is failed by one.
func (s *Store) Expire(ctx context.Context) ([]string, error) {
	var lost []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		type gone struct{ id, owner string }
		rows, err := tx.Query(ctx, `SELECT id, coalesce(owner, '') FROM halo_runs WHERE status = 'running' AND lease_until < now()
ORDER BY lease_until LIMIT 100 FOR UPDATE SKIP LOCKED`)
		if err != nil {
			return err
		}
		runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (gone, error) {
			var g gone
			return g, row.Scan(&g.id, &g.owner)
		})
		if err != nil {
			return err
		}
		for _, g := range runs {
			rec, err := s.load(ctx, tx, g.id)
			if err != nil {
				return err
			}
			erows, err := tx.Query(ctx, `SELECT event FROM halo_events WHERE run_id = $1 ORDER BY seq`, g.id)
			if err != nil {
				return err
			}
			live, err := pgx.CollectRows(erows, func(row pgx.CollectableRow) (runtime.Event, error) {
				var raw []byte
				var e runtime.Event
				if err := row.Scan(&raw); err != nil {
					return e, err
				}
				return e, json.Unmarshal(raw, &e)
			})
			if err != nil {
				return err
			}
			if len(live) >= len(rec.Events) {
				rec.Events = live
			}
			runstore.LoseRecord(rec, s.now(), fmt.Sprintf("the replica running it (%s) stopped renewing its lease of %s", g.owner, s.lease))
			raw, err := runstore.MarshalRecord(rec)
			if err != nil {
				return err
			}
			c := runstore.ColumnsOf(rec)
			if _, err := tx.Exec(ctx, `UPDATE halo_runs SET status = $2, error_code = $3, error_message = $4, updated = $5, record = $6,
owner = NULL, lease_until = NULL, cancel_requested = false, search = $7 WHERE id = $1`, g.id, c.Status, c.ErrCode, c.ErrMsg, rec.Updated, string(raw), c.Search); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM halo_events WHERE run_id = $1`, g.id); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_notify('`+channel+`', $1 || ' saved')`, g.id); err != nil {
				return err
			}
			lost = append(lost, g.id)
		}
		return nil
	})
	if err != nil {
		return nil, storeErr("expire lost runs", err)
	}
	return lost, nil
}

// RequestCancel marks running run id to be cancelled and tells its replica.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `
WITH up AS (UPDATE halo_runs SET cancel_requested = true WHERE id = $1 AND status = 'running' RETURNING id)
SELECT pg_notify('`+channel+`', id || ' cancel') FROM up`, id)
	if err != nil {
		return storeErr("run "+id+": cancel", err)
	}
	if tag.RowsAffected() == 0 {
		return runstore.Errorf(runtime.CodeRun, "run %s is not running", id)
	}
	return nil
}

// UseLink records the link's use; false when it was used before.
func (s *Store) UseLink(ctx context.Context, linkID, runID string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `INSERT INTO halo_links (id, run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, linkID, runID)
	if err != nil {
		return false, storeErr("approval link", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Secret returns the approval key every replica shares, made by gen on first use.
func (s *Store) Secret(ctx context.Context, gen func() ([]byte, error)) ([]byte, error) {
	var got []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM halo_secrets WHERE name = 'approval'`).Scan(&got)
	if err == nil {
		return got, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, storeErr("approval key", err)
	}
	key, err := gen()
	if err != nil {
		return nil, err
	}
	// Two replicas may make one at once: the first kept is everyone's.
	err = s.pool.QueryRow(ctx, `
WITH ins AS (INSERT INTO halo_secrets (name, value) VALUES ('approval', $1) ON CONFLICT DO NOTHING RETURNING value)
SELECT value FROM ins UNION ALL SELECT value FROM halo_secrets WHERE name = 'approval' LIMIT 1`, key).Scan(&got)
	if err != nil {
		return nil, storeErr("approval key", err)
	}
	return got, nil
}

// Listen delivers the store's notes until ctx ends, on a connection of its own; it connects
// again (after a pause) when the connection fails.
func (s *Store) Listen(ctx context.Context, fn func(runstore.Note)) error {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listen(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		s.log.Warn("store notifications: connection lost; connecting again", "error", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return nil
}

func (s *Store) listen(ctx context.Context, fn func(runstore.Note)) error {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	// Whatever happened while no one listened: every running run may have moved on.
	fn(runstore.Note{Kind: runstore.NoteSaved})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, kind, ok := strings.Cut(n.Payload, " ")
		if ok {
			fn(runstore.Note{RunID: id, Kind: kind})
		}
	}
}
