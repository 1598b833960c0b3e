package runstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/ncruces/go-sqlite3"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/sqlitedb"
	"halolang.dev/halo/pkgmgr/statedir"
)

// DBName is the embedded store's database file in .halo/runs. SQLite keeps DBName-wal and
// DBName-shm beside it while it is open.
const DBName = "runs.db"

// A SQLite is the embedded run store: one SQLite database in .halo/runs (WAL mode, through
// internal/sqlitedb, as host/store's: no cgo, and one SQLite in the binary), with the
// schema PostgreSQL's store has (migrations). halo
// run, resume, replay, runs, mcp and serve all keep their runs in it, and any number of
// these processes may use it at once: SQLite lets one write at a time, and the others wait
// for it (up to busyTimeout). halo serve opens it Exclusive: it holds the runs it runs in
// memory, and fails those a server before it left running, so a second server, or a halo
// resume beside it, is refused (CodeBusy).
//
// Saves go through a group commit (see commits): one transaction writes every record saved
// since the one before, and SQLite syncs it (synchronous=FULL) before it counts as done.
// What Save promises is what docs/cli.md says: a paused record, and without GroupCommit
// every record, is committed before Save returns; with GroupCommit any other record is
// readable at once by this store (Load; a list waits for it to be committed) and is
// committed at most commitEvery later. A run that starts and stops within one commit is
// written once.
type SQLite struct {
	dir, path string
	// w is the one connection that writes (commits, migrations, removals); r reads.
	w, r *sql.DB
	// loadQ and summaryQ are r's statements that reads of one run use, prepared
	// once: preparing was a fifth of what halo serve's store did per run.
	loadQ, summaryQ *sql.Stmt
	opts            SQLiteOptions
	log             hclog.Logger
	unlock          func()

	commits

	// held are the runs this process runs (Start, Claim) until their record as they stop
	// is saved; orphans the runs an exclusive store found running when it opened, left by
	// a process before it, until Expire fails them.
	hmu     sync.Mutex
	held    map[string]bool
	orphans map[string]bool
	claimMu sync.Mutex

	// imp is what opening found of an older halo's files.
	imp *Import
	// text is how a text query is read (textsearch.go).
	text textPlan
	// keys turns run ids into the keys their rows are found by, keySrc hands out the keys
	// of the runs this process starts (runkey.go).
	keys   *runKeys
	keySrc keySource
}

// SQLiteOptions are the optional parts of OpenSQLite.
type SQLiteOptions struct {
	// Exclusive takes the store for this process alone (halo serve): an exclusive open while
	// another process has one is refused with CodeBusy.
	Exclusive bool
	// GroupCommit lets Save return a record that is not paused before it is committed
	// (halo mcp, halo serve). Without it every Save waits for its commit (halo run).
	GroupCommit bool
	// SecretFile is where Secret keeps its key; "" means "serve.key" beside the folder
	// (.halo/serve.key for .halo/runs).
	SecretFile string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger is told of what opening found (records imported from a folder of an older
	// halo, a folder it could not import); nil means none.
	Logger hclog.Logger
}

// The page caches of the writer and of each reader, in KiB: see dsn.
const (
	writeCacheKiB = 16 << 10
	readCacheKiB  = 4 << 10
)

// busyTimeout is how long a process waits for another that writes the database.
const busyTimeout = 10 * time.Second

// OpenSQLite opens the store in dir (.halo/runs; made when missing), creating or migrating
// its database, and imports the records an older halo left there as files (see
// importFolder). A dir or .halo that is a symbolic link, or a database file (or its -wal,
// -shm, -journal) that is one or is not a regular file, is refused with STATE_DIR_UNSAFE; a
// file that is not a SQLite database, or whose schema is newer than this halo's, with
// CodeStore.
func OpenSQLite(dir string, opts SQLiteOptions) (*SQLite, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, storeErr("run store "+dir, err)
	}
	root, err := openRunsFolder(abs, true)
	if err != nil {
		var coded interface{ ErrorCode() string }
		if errors.As(err, &coded) {
			return nil, err
		}
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	defer root.Close()
	s := &SQLite{dir: dir, path: filepath.Join(abs, DBName), opts: opts, log: log, held: map[string]bool{}, orphans: map[string]bool{}}
	if opts.Exclusive {
		if s.unlock, err = lockFolder(root, dir); err != nil {
			return nil, err
		}
	}
	if err := checkDBFiles(root, dir); err != nil {
		s.release()
		return nil, err
	}
	// Records are the user's alone (they hold unredacted answers): the database is made
	// with mode 0600, and SQLite gives its -wal and -shm the same.
	if f, err := root.OpenFile(DBName, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		s.release()
		return nil, &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", dir, err), Err: err}
	}
	// The driver makes the -shm file 0666 less the umask, whatever modeof says: it is made
	// 0600 first, as SQLite's own VFS would make it.
	if f, err := root.OpenFile(DBName+"-shm", os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600); err == nil {
		f.Close()
	}
	if err := s.open(); err != nil {
		s.release()
		return nil, err
	}
	if err := s.importFolder(root); err != nil {
		s.Close()
		return nil, err
	}
	if opts.Exclusive {
		rows, err := s.r.Query(`SELECT id FROM halo_runs WHERE status = 'running'`)
		if err != nil {
			s.Close()
			return nil, s.dbErr("open", err)
		}
		for rows.Next() {
			var id string
			if rows.Scan(&id) == nil {
				s.orphans[id] = true
			}
		}
		rows.Close()
	}
	s.commits.init(s)
	return s, nil
}

// checkDBFiles refuses a database file, or one SQLite makes beside it, that is a symbolic
// link or not a regular file: SQLite opens them by name, and a repository can ship
// .halo/runs/runs.db-wal pointing at a file of the user's, which a commit would write.
func checkDBFiles(root *os.Root, dir string) error {
	for _, name := range []string{DBName, DBName + "-wal", DBName + "-shm", DBName + "-journal"} {
		fi, err := root.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %v", filepath.Join(dir, name), err), Err: err}
		}
		if !fi.Mode().IsRegular() {
			return &statedir.Error{Path: filepath.Join(dir, name), Problem: "is a symbolic link or not a regular file"}
		}
	}
	return nil
}

// dsn is how the driver opens the database: WAL, every commit synced, waiting for another
// writer up to busyTimeout; write transactions take the write lock as they begin. The
// schema is not trusted (trusted_schema off: a database a repository ships runs no function
// with side effects from its triggers or views), and every connection is defensive
// (openDB).
//
// The writer's page cache holds a large commit's pages and the indexes, so that a commit
// does not spill pages to the log before it ends (which writes them twice) and read them
// back: with SQLite's 2 MiB, BenchmarkSave's 20,000 saves before it measures did both
// (docs/mcp.md, "Where a record's time goes").
func (s *SQLite) dsn(write bool) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(0)")
	q.Add("_pragma", "trusted_schema(0)")
	// The log (and a rollback journal) gets the database's mode, 0600, as SQLite's own
	// files do (the driver makes them 0666 less the umask otherwise).
	q.Set("modeof", s.path)
	q.Set("vfs", walVFSName)
	if write {
		q.Set("_txlock", "immediate")
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", writeCacheKiB))
		q.Add("_pragma", "temp_store(MEMORY)")
	} else {
		q.Set("_txlock", "deferred")
		q.Add("_pragma", "query_only(1)")
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", readCacheKiB))
	}
	return "file:" + (&url.URL{Path: s.path}).EscapedPath() + "?" + q.Encode()
}

// openDB opens the database through sqlitedb, each connection defensive: ordinary SQL
// cannot write the text index's own tables, nor corrupt the file.
func openDB(dsn string) (*sql.DB, error) { return sqlitedb.Open(dsn, true) }

// open connects and migrates.
func (s *SQLite) open() error {
	var err error
	if s.w, err = openDB(s.dsn(true)); err != nil {
		return storeErr("run store "+s.dir, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetConnMaxIdleTime(0)
	// No deadline: a wait for another process is bounded by busyTimeout, and a schema step
	// that copies every run (step 9) takes seconds for 100,000 of them.
	if err := s.migrate(context.Background()); err != nil {
		s.w.Close()
		s.w = nil
		return err
	}
	if s.r, err = openDB(s.dsn(false)); err != nil {
		s.w.Close()
		return storeErr("run store "+s.dir, err)
	}
	s.r.SetMaxOpenConns(4)
	s.r.SetMaxIdleConns(4)
	for _, q := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&s.loadQ, `SELECT status, record FROM halo_runs WHERE key = ? AND id = ?`},
		{&s.summaryQ, `SELECT ` + SummaryColumns + ` FROM halo_runs WHERE key = ? AND id = ?`},
	} {
		if *q.stmt, err = s.r.Prepare(q.sql); err != nil {
			s.closeDBs()
			return s.dbErr("open", err)
		}
	}
	return nil
}

// closeDBs closes the statements and connections open has made.
func (s *SQLite) closeDBs() error {
	var err error
	for _, st := range []*sql.Stmt{s.loadQ, s.summaryQ} {
		if st != nil {
			st.Close()
		}
	}
	s.loadQ, s.summaryQ = nil, nil
	for _, db := range []*sql.DB{s.r, s.w} {
		if db != nil {
			if cerr := db.Close(); err == nil && cerr != nil {
				err = s.dbErr("close", cerr)
			}
		}
	}
	s.r, s.w = nil, nil
	return err
}

// migrate puts the database in WAL mode and applies the schema steps it lacks, in one
// transaction: a second process opening at once waits for it, then finds nothing to do.
func (s *SQLite) migrate(ctx context.Context) error {
	// What the file is, first, before anything changes it (WAL mode rewrites its header).
	var tables []string
	rows, err := s.w.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		return s.dbErr("open", err)
	}
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			tables = append(tables, n)
		}
	}
	rows.Close()
	hasSchema := false
	for _, t := range tables {
		hasSchema = hasSchema || t == "halo_schema"
	}
	if !hasSchema && len(tables) > 0 {
		return Errorf(CodeStore, "%s is a SQLite database, but not a Halo run store (it has tables %s and no halo_schema): move it away, and halo makes a new store", s.path, strings.Join(tables[:min(len(tables), 5)], ", "))
	}
	var mode string
	if err := s.w.QueryRowContext(ctx, `PRAGMA journal_mode=WAL`).Scan(&mode); err != nil {
		return s.dbErr("open", err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr("open", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, SQLiteDialect.SchemaTableSQL()); err != nil {
		return s.dbErr("open", err)
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM halo_schema`).Scan(&have); err != nil {
		return s.dbErr("open", err)
	}
	if have > SchemaVersion {
		return Errorf(CodeStore, "the run store %s has schema version %d, made by a newer halo; this one knows up to %d: upgrade halo", s.path, have, SchemaVersion)
	}
	for v := have + 1; v <= SchemaVersion; v++ {
		if v == keyedStep {
			if err := s.beforeKeyed(ctx, tx); err != nil {
				return s.dbErr(fmt.Sprintf("schema version %d", v), err)
			}
		}
		for _, st := range SQLiteDialect.Migration(v) {
			if _, err := tx.ExecContext(ctx, st); err != nil {
				return s.dbErr(fmt.Sprintf("schema version %d", v), err)
			}
		}
		if v == keyedStep {
			if err := s.afterKeyed(ctx, tx); err != nil {
				return s.dbErr(fmt.Sprintf("schema version %d", v), err)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO halo_schema (version) VALUES (?)`, v); err != nil {
			return s.dbErr("open", err)
		}
	}
	if s.keys == nil {
		if err := s.loadRunKeys(ctx, tx); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return s.dbErr("open", err)
	}
	return nil
}

// dbErr makes a database failure a CodeStore error that says what it means: a file that is
// not a database, a full disk, a database another process holds too long.
// removeRuns is what Delete and Prune say they did when they fail.
const removeRuns = "remove runs"

func (s *SQLite) dbErr(what string, err error) error {
	var code sqlite3.ErrorCode
	if errors.As(err, &code) {
		// The driver (v0.37.0) reports a write to a full disk as an I/O error, and its
		// cause is gone by then: the folder's free space says what it was.
		if code == sqlite3.IOERR && (errors.Is(err, syscall.ENOSPC) || diskFull(filepath.Dir(s.path))) {
			code = sqlite3.FULL
		}
		switch code {
		case sqlite3.NOTADB:
			return &Error{Code: CodeStore, Message: fmt.Sprintf("%s is not a SQLite database (nor a Halo run store): move it away, and halo makes a new store", s.path), Err: err}
		case sqlite3.FULL:
			hint := ""
			if what == removeRuns {
				// What people do first on a full disk: SQLite writes a removal to its log
				// before the space comes back.
				hint = " (removing runs needs some free space itself: free some, then remove them)"
			}
			return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %s: the disk is full%s: %v", s.path, what, hint, err), Err: err}
		case sqlite3.BUSY, sqlite3.LOCKED:
			return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %s: another process held the database for over %s: %v", s.path, what, busyTimeout, err), Err: err}
		case sqlite3.CORRUPT:
			return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %s: the database is damaged: %v", s.path, what, err), Err: err}
		}
	}
	var coded interface{ ErrorCode() string }
	if errors.As(err, &coded) {
		return err
	}
	return &Error{Code: CodeStore, Message: fmt.Sprintf("run store %s: %s: %v", s.path, what, err), Err: err}
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// release lets go of the exclusive lock.
func (s *SQLite) release() {
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
}

// Close commits every record saved, closes the database, and releases the store for
// another exclusive process.
func (s *SQLite) Close() error {
	err := s.commits.close()
	if cerr := s.closeDBs(); err == nil {
		err = cerr
	}
	s.release()
	return err
}

// Load reads run id's record: the newest saved, committed or not.
func (s *SQLite) Load(id string) (*runtime.Record, error) {
	if !ValidID(id) {
		return nil, Errorf(runtime.CodeRun, "%q is not a run id", truncate(id, 130))
	}
	if rec, ok := s.unsaved(id); ok {
		return rec, nil
	}
	var status string
	var raw []byte
	err := s.loadQ.QueryRow(s.keys.of(id), id).Scan(&status, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("no run %s in %s", id, s.dir), Err: ErrNotFound}
	}
	if err != nil {
		return nil, &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: %v", id, s.dbErr("load", err)), Err: err}
	}
	return decodeRecord(id, raw)
}

// decodeRecord reads run id's record from what the database holds (recordpack.go).
func decodeRecord(id string, stored []byte) (*runtime.Record, error) {
	raw, err := unpackRecord(stored)
	if err != nil {
		return nil, &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: unreadable record: %v", id, err), Err: err}
	}
	var rec runtime.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: unreadable record: %v", id, err), Err: err}
	}
	if rec.RunID != id {
		return nil, Errorf(runtime.CodeRun, "run %s: the record stored for it is of run %q", id, truncate(rec.RunID, 130))
	}
	return &rec, nil
}

func notFound(id string, err error) error {
	return &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("no run %s", truncate(id, 130)), Err: errors.Join(ErrNotFound, err)}
}

// ValidID reports whether id can be a run id: 1 to 128 ASCII letters, digits, '_' and '-',
// not starting with '_' or '-'. Checked by hand: a regular expression cost a few percent
// of halo mcp's time.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Save writes rec, replacing the run's record. A paused record, and without GroupCommit any
// record, is committed when Save returns. A run this process does not hold that a process
// before it left running is refused (Expire fails it).
func (s *SQLite) Save(rec *runtime.Record) error {
	if !ValidID(rec.RunID) {
		return Errorf(runtime.CodeRun, "%q is not a run id", truncate(rec.RunID, 130))
	}
	s.hmu.Lock()
	if s.orphans[rec.RunID] {
		s.hmu.Unlock()
		return Errorf(CodeTaken, "run %s is not held by this process: its record was not saved", rec.RunID)
	}
	s.hmu.Unlock()
	p, err := s.put(rec, putSave)
	if err != nil {
		return err
	}
	if rec.Status != runtime.Running {
		s.hmu.Lock()
		delete(s.held, rec.RunID)
		s.hmu.Unlock()
	}
	if rec.Status == runtime.Paused || !s.opts.GroupCommit || s.commits.mustWait() {
		return s.wait(p)
	}
	return nil
}

// latestPausedSQL selects the most recently updated paused run, from halo_runs_status.
const latestPausedSQL = `SELECT id FROM halo_runs WHERE status = 'paused' AND ` + UnfinishedRuns + ` ORDER BY updated DESC, id DESC LIMIT 1`

// Latest returns the most recently updated paused run.
func (s *SQLite) Latest() (string, error) {
	if err := s.Sync(); err != nil {
		return "", err
	}
	var id string
	err := s.r.QueryRow(latestPausedSQL).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", Errorf(runtime.CodeRun, "no paused run in %s", s.dir)
	}
	if err != nil {
		return "", s.dbErr("latest paused run", err)
	}
	return id, nil
}

// Newest returns the most recently updated run of any status (halo replay FILE last).
func (s *SQLite) Newest() (string, error) {
	if err := s.Sync(); err != nil {
		return "", err
	}
	var id string
	err := s.r.QueryRow(`SELECT id FROM halo_runs ORDER BY updated DESC, id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", Errorf(runtime.CodeRun, "no run in %s", s.dir)
	}
	if err != nil {
		return "", s.dbErr("newest run", err)
	}
	return id, nil
}

// Start saves the record of a run that starts, held by this process. It is written only if
// the run is still running when the next commit begins: a run that stops before is written
// once, as it stops. Start refuses a run this process holds or has not yet committed; it
// does not read the database: a row of that id there (another process's, or one saved
// before this one opened it, which a random id makes as good as impossible) is found by
// the commit, which then writes nothing of this run (its Save, or Sync, fails with
// CodeTaken) and leaves that row as it was.
func (s *SQLite) Start(ctx context.Context, rec *runtime.Record) error {
	if !ValidID(rec.RunID) {
		return Errorf(runtime.CodeRun, "%q is not a run id", truncate(rec.RunID, 130))
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	s.hmu.Lock()
	held := s.held[rec.RunID] || s.orphans[rec.RunID]
	s.hmu.Unlock()
	if held || s.commits.newest(rec.RunID) != nil {
		return Errorf(CodeTaken, "run %s exists already", rec.RunID)
	}
	if _, err := s.put(rec, putStart); err != nil {
		return err
	}
	s.hmu.Lock()
	s.held[rec.RunID] = true
	s.hmu.Unlock()
	return nil
}

// Claim takes paused run rec, unless another claim took it first or it changed since it was
// loaded. The record says running from then on, committed before Claim returns, so a
// process that stops while continuing it leaves a run that Expire fails, not one that could
// run the same stages twice. The commit itself takes the row only while it is still paused
// as rec was, so a process that wrote it meanwhile wins.
func (s *SQLite) Claim(ctx context.Context, rec *runtime.Record, sig Signal) error {
	s.claimMu.Lock()
	if s.commits.newest(rec.RunID) != nil {
		// The claim is decided on the committed row: a save of the run still queued is
		// committed first.
		if err := s.Sync(); err != nil {
			s.claimMu.Unlock()
			return err
		}
	}
	cur, ok := s.unsavedSummary(rec.RunID)
	if !ok {
		var err error
		cur, ok, err = s.summary(rec.RunID)
		if err != nil {
			s.claimMu.Unlock()
			return err
		}
	}
	if !ok {
		s.claimMu.Unlock()
		return notFound(rec.RunID, nil)
	}
	if cur.Status != runtime.Paused || !cur.Updated.Equal(rec.Updated) {
		s.claimMu.Unlock()
		return Errorf(CodeTaken, "run %s is no longer paused as it was: another signal continued it first", rec.RunID)
	}
	running := *rec
	running.Status = runtime.Running
	p, err := s.put(&running, putClaim)
	if err == nil {
		s.hmu.Lock()
		s.held[rec.RunID] = true
		s.hmu.Unlock()
	}
	s.claimMu.Unlock()
	if err != nil {
		return err
	}
	if err := s.wait(p); err != nil {
		s.hmu.Lock()
		delete(s.held, rec.RunID)
		s.hmu.Unlock()
		if errors.Is(err, errClaimLost) {
			return Errorf(CodeTaken, "run %s is no longer paused as it was: another process continued it first", rec.RunID)
		}
		// Not claimed after all: the paused record is put back in place, so that the run
		// is not shown running while nothing runs it.
		if p2, perr := s.put(rec, putSave); perr == nil {
			s.wait(p2)
		}
		return err
	}
	return nil
}

// summary reads run id's list row from the database.
func (s *SQLite) summary(id string) (Summary, bool, error) {
	rows, err := s.summaryQ.Query(s.keys.of(id), id)
	if err != nil {
		return Summary{}, false, s.dbErr("run "+id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return Summary{}, false, s.dbErr("run "+id, rows.Err())
	}
	sum, err := scanSummary(rows)
	if err != nil {
		return Summary{}, false, s.dbErr("run "+id, err)
	}
	return sum, true, nil
}

// scanSummary reads a row of SummaryColumns, times as nanoseconds.
func scanSummary(rows *sql.Rows) (Summary, error) {
	var c Columns
	var started, updated int64
	err := rows.Scan(&c.ID, &c.File, &c.Pipeline, &c.Status, &c.Waiting, &c.ErrCode, &c.ErrMsg, &started, &updated, &c.Cost, &c.Violations, &c.TokensIn, &c.TokensOut, &c.Unpriced)
	c.Started, c.Updated = time.Unix(0, started).UTC(), time.Unix(0, updated).UTC()
	return c.Summary(), err
}

// AppendEvent keeps nothing: the process that runs a run serves its live events.
func (s *SQLite) AppendEvent(ctx context.Context, runID string, seq int, e runtime.Event) error {
	return nil
}

// LocalEvents says the embedded store keeps no live events, so halo serve need not hand it
// each one.
func (s *SQLite) LocalEvents() bool { return true }

// Events returns the events of run id's record after number after.
func (s *SQLite) Events(ctx context.Context, id string, after int) ([]runtime.Event, runtime.Status, error) {
	rec, err := s.Load(id)
	if err != nil {
		return nil, "", err
	}
	after = max(0, min(after, len(rec.Events)))
	return rec.Events[after:], rec.Status, nil
}

// nanos is a time as SQLite keeps it.
func nanos(t time.Time) any { return t.UnixNano() }

// List returns a page of the runs q selects, newest first, once every record saved so far
// is committed.
func (s *SQLite) List(ctx context.Context, q Query) (Page, error) {
	query, args, err := SQLiteDialect.ListSQL(q, nanos)
	if err != nil {
		return Page{}, err
	}
	if err := s.Sync(); err != nil {
		return Page{}, err
	}
	if len(q.Words()) > 0 {
		return s.listText(ctx, q, query, args)
	}
	runs, err := s.listRows(ctx, query, args)
	if err != nil {
		return Page{}, err
	}
	return PageOf(q, runs), nil
}

// listRows reads the summaries query selects.
func (s *SQLite) listRows(ctx context.Context, query string, args []any) ([]Summary, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.dbErr("list runs", err)
	}
	defer rows.Close()
	var runs []Summary
	for rows.Next() {
		sum, err := scanSummary(rows)
		if err != nil {
			return nil, s.dbErr("list runs", err)
		}
		runs = append(runs, sum)
	}
	if err := rows.Err(); err != nil {
		return nil, s.dbErr("list runs", err)
	}
	return runs, nil
}

// Delete removes the runs ids, once every record saved so far is committed.
func (s *SQLite) Delete(ctx context.Context, ids []string) ([]string, error) {
	if err := s.Sync(); err != nil {
		return nil, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, s.dbErr(removeRuns, err)
	}
	defer tx.Rollback()
	var gone []string
	for _, id := range ids {
		var status string
		key := s.keys.of(id)
		err := tx.QueryRowContext(ctx, `SELECT status FROM halo_runs WHERE key = ? AND id = ?`, key, id).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, s.dbErr(removeRuns, err)
		}
		s.hmu.Lock()
		held := s.held[id]
		s.hmu.Unlock()
		if status == string(runtime.Running) || held {
			return nil, Errorf(CodeRunning, "run %s is running: it can be removed once it stops (nothing was removed)", id)
		}
		for i, st := range sqliteDeleteRun {
			args := []any{id}
			if i == 0 {
				args = append(args, key)
			}
			if _, err := tx.ExecContext(ctx, st, args...); err != nil {
				return nil, s.dbErr(removeRuns, err)
			}
		}
		gone = append(gone, id)
	}
	if err := tx.Commit(); err != nil {
		return nil, s.dbErr(removeRuns, err)
	}
	return gone, nil
}

// DeleteRun are the statements that remove run $1 and what the store keeps of it.
var DeleteRun = []string{
	`DELETE FROM halo_runs WHERE id = $1`,
	`DELETE FROM halo_events WHERE run_id = $1`,
	`DELETE FROM halo_signals WHERE run_id = $1`,
	`DELETE FROM halo_links WHERE run_id = $1`,
}

// sqliteDeleteRun are DeleteRun in the embedded store, which finds the row of run ?1 by its
// key, ?2 (of the first statement alone).
var sqliteDeleteRun = []string{
	`DELETE FROM halo_runs WHERE key = ?2 AND id = ?1`,
	strings.ReplaceAll(DeleteRun[1], "$1", "?1"),
	strings.ReplaceAll(DeleteRun[2], "$1", "?1"),
	strings.ReplaceAll(DeleteRun[3], "$1", "?1"),
}

// Prune removes the finished runs p selects, once every record saved so far is committed.
func (s *SQLite) Prune(ctx context.Context, p Prune) (int, error) {
	if err := s.Sync(); err != nil {
		return 0, err
	}
	ids, err := s.pruned(ctx, p)
	if err != nil {
		return 0, err
	}
	gone := 0
	for len(ids) > 0 { // in transactions of 500, so that other writers are not held up long
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

// pruned returns the ids Prune p removes.
func (s *SQLite) pruned(ctx context.Context, p Prune) ([]string, error) {
	query, args := PruneSQL(SQLiteDialect, p, nanos)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, s.dbErr(removeRuns, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.dbErr(removeRuns, err)
		}
		ids = append(ids, id)
	}
	return ids, s.dbErr2(removeRuns, rows.Err())
}

func (s *SQLite) dbErr2(what string, err error) error {
	if err == nil {
		return nil
	}
	return s.dbErr(what, err)
}

// Keep has nothing to renew: runs are held by the one process that has the store open
// exclusively.
func (s *SQLite) Keep(ctx context.Context) ([]string, error) { return nil, nil }

// Expire fails the runs the store said were running when it opened: the process before it
// stopped while they ran.
func (s *SQLite) Expire(ctx context.Context) ([]string, error) {
	s.hmu.Lock()
	var lost []string
	for id := range s.orphans {
		lost = append(lost, id)
	}
	s.hmu.Unlock()
	sort.Strings(lost)
	var out []string
	for _, id := range lost {
		rec, err := s.Load(id)
		if err == nil && rec.Status == runtime.Running {
			LoseRecord(rec, s.opts.Now(), "the halo serve that ran it stopped before it finished")
			p, perr := s.put(rec, putSave)
			if perr == nil {
				perr = s.wait(p)
			}
			if perr != nil {
				return out, perr
			}
			out = append(out, id)
		}
		s.hmu.Lock()
		delete(s.orphans, id)
		s.hmu.Unlock()
	}
	return out, nil
}

// RequestCancel refuses: a run in the embedded store runs in the process that has it open,
// which cancels it itself.
func (s *SQLite) RequestCancel(ctx context.Context, id string) error {
	return Errorf(runtime.CodeRun, "run %s is not running in this process", id)
}

// UseLink records the use of an approval link; false when it was used before.
func (s *SQLite) UseLink(ctx context.Context, linkID, runID string) (bool, error) {
	res, err := s.w.ExecContext(ctx, `INSERT INTO halo_links (id, run_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, linkID, runID)
	if err != nil {
		return false, s.dbErr("approval link", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Listen has nothing to report: runs are announced only within the process that runs them.
func (s *SQLite) Listen(ctx context.Context, fn func(Note)) error { return nil }

var _ Store = (*SQLite)(nil)
