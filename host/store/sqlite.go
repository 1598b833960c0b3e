package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/ncruces/go-sqlite3"

	"halolang.dev/halo/internal/sqlitedb"
)

// The SQLite index: one database per store, .halo/stores/<Name>.db (or <Name>.mock.db for
// mocked runs), in WAL mode. A File store indexes its chunks in an FTS5 table (porter
// stemming, BM25 with headings weighted twice, 32 MB of terms held before a flush to disk,
// not 1 MB: half the time of indexing went to flushing and merging small segments); a VectorStore keeps each vector as a blob of
// float32s and holds them all in memory to search (vectors.go).

// formatName marks a database as a Halo store's; a database without it is foreign.
const formatName = "halo-store-1"

// storesDir is where the databases are, in the project folder.
const storesDir = ".halo/stores"

type sqliteStore struct {
	spec Spec
	dir  *os.Root // .halo/stores
	path string
	name string // the database file's name in dir
	db   *sql.DB
	// bulk writes a batch split across two cores (ftspart.go): it writes FTS5's tables as
	// FTS5 does, which the defensive connections of db may not. Each of its connections is
	// new and closed after its transaction, so none keeps a list of segments that is no
	// longer the table's.
	bulk *sql.DB

	// mu guards the vectors held in memory and the generation they are of.
	mu     sync.Mutex
	vecs   *vectors
	vecGen int64
}

const sqliteSchema = `
CREATE TABLE halo_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, size INTEGER NOT NULL, mtime INTEGER NOT NULL, hash BLOB NOT NULL);
CREATE TABLE chunks (id INTEGER PRIMARY KEY, file_id INTEGER, key TEXT NOT NULL UNIQUE, start_line INTEGER NOT NULL DEFAULT 0,
	end_line INTEGER NOT NULL DEFAULT 0, title TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, metadata TEXT, vec BLOB);
CREATE INDEX chunks_file ON chunks(file_id);
`

const ftsSchema = `
CREATE VIRTUAL TABLE chunks_fts USING fts5(title, text, content='chunks', content_rowid='id', ` + ftsTokenizer + `);
INSERT INTO chunks_fts(chunks_fts, rank) VALUES('rank', 'bm25(2.0, 1.0)');
INSERT INTO chunks_fts(chunks_fts, rank) VALUES('hashsize', 33554432);
`

// openSQLite opens (or creates) the store's database under .halo/stores. Nothing is written
// anywhere else in the project: .halo and .halo/stores must be folders (not links), and the
// database and its side files regular files. A database that is not a Halo store's, or was
// not made here (copied or planted: its recorded file identity is not its own), is refused
// with STORE_CORRUPT.
func openSQLite(root *os.Root, projectDir string, spec Spec, mock bool) (*sqliteStore, error) {
	dir, err := storesFolder(root)
	if err != nil {
		return nil, err
	}
	name := spec.Name + ".db"
	if mock {
		name = spec.Name + ".mock.db"
	}
	s := &sqliteStore{spec: spec, dir: dir, name: name, path: filepath.Join(projectDir, filepath.FromSlash(storesDir), name)}
	if err := s.open(); err != nil {
		dir.Close()
		return nil, err
	}
	return s, nil
}

// storesFolder opens .halo/stores in the project, making it when it is missing, refusing a
// link or a file in the place of either folder.
func storesFolder(root *os.Root) (*os.Root, error) {
	for _, p := range []string{".halo", storesDir} {
		fi, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := root.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, fmt.Errorf("stores: make %s: %w", p, err)
			}
		case err != nil:
			return nil, fmt.Errorf("stores: %s: %w", p, err)
		case !fi.IsDir():
			return nil, corruptf("%s is not a folder (it is %s): stores keep their indexes there; remove it", p, fileKind(fi.Mode()))
		}
	}
	return root.OpenRoot(storesDir)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m.IsDir():
		return "a folder"
	case m.IsRegular():
		return "a file"
	}
	return "a special file"
}

func corruptf(format string, args ...any) error {
	return &storeError{code: CodeCorrupt, msg: fmt.Sprintf(format, args...)}
}

// A storeError is a store failure with a stable code.
type storeError struct {
	code, msg string
	err       error
}

func (e *storeError) Error() string     { return e.msg }
func (e *storeError) Unwrap() error     { return e.err }
func (e *storeError) ErrorCode() string { return e.code }

// sideFiles are the database and the files SQLite keeps beside it.
func (s *sqliteStore) sideFiles() []string {
	return []string{s.name, s.name + "-wal", s.name + "-shm", s.name + "-journal"}
}

// open checks the files, opens the database and makes or checks its schema.
func (s *sqliteStore) open() error {
	existed := false
	for _, f := range s.sideFiles() {
		fi, err := s.dir.Lstat(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store %s: %w", s.spec.Name, err)
		}
		if !fi.Mode().IsRegular() {
			return corruptf("store %s: %s/%s is %s, not a database file: run halo index --rebuild %s", s.spec.Name, storesDir, f, fileKind(fi.Mode()), s.spec.Name)
		}
		if f == s.name {
			existed = fi.Size() > 0
		}
	}
	if !existed {
		// Made through the folder's root, so the file is a new one inside .halo/stores.
		f, err := s.dir.OpenFile(s.name, os.O_RDWR|os.O_CREATE|noFollow, 0o644)
		if err != nil {
			return fmt.Errorf("store %s: %w", s.spec.Name, err)
		}
		f.Close()
	}
	db, err := openDB(sqliteDSN(s.path, s.spec.Kind), true)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.spec.Name, err)
	}
	db.SetMaxOpenConns(4)
	s.db = db
	if err := s.init(existed); err != nil {
		db.Close()
		s.db = nil
		return err
	}
	if s.spec.Kind == File {
		// Not defensive: it writes FTS5's tables as FTS5 does (ftspart.go), running only the
		// store's own statements, on a database init has found to be this store's.
		if s.bulk, err = openDB(sqliteDSN(s.path, File), false); err != nil {
			db.Close()
			s.db = nil
			return fmt.Errorf("store %s: %w", s.spec.Name, err)
		}
		s.bulk.SetMaxOpenConns(1)
		s.bulk.SetMaxIdleConns(0)
	}
	return nil
}

// sqliteDSN is the database's URI: a busy timeout (the store's own lock keeps writers
// apart; readers never wait for long), no trust in the schema (a planted database's
// triggers and views run no function with side effects), defensive mode.
//
// A File store's database is written without fsync (synchronous=OFF): all it holds is made
// from the project's files, so what a power cut or a crash of the system may damage is
// rebuilt (STORE_CORRUPT says so: halo index --rebuild), and a crash of the process loses
// nothing that was committed. A VectorStore's holds the texts pipelines added, found nowhere
// else: its commits are synced (synchronous=NORMAL, WAL's: at each checkpoint).
func sqliteDSN(path, kind string) string {
	esc := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
	sync := "NORMAL"
	if kind == File {
		sync = "OFF"
	}
	return "file:" + esc + "?_pragma=synchronous(" + sync + ")&_pragma=busy_timeout(10000)" +
		"&_pragma=trusted_schema(0)&_pragma=cache_size(-32768)&_txlock=immediate"
}

// openDB opens a database as sqlitedb does, FTS5 on each connection and, when defensive,
// SQLite's defensive mode. Its connections having memory of their own is what lets a batch
// index on two cores (ftspart.go): modernc.org/sqlite's share one allocator lock, and
// indexed slower on two than on one.
func openDB(dsn string, defensive bool) (*sql.DB, error) { return sqlitedb.Open(dsn, defensive) }

// init makes the schema of a new database, or checks an existing one is this store's.
func (s *sqliteStore) init(existed bool) error {
	ctx := context.Background()
	ino, err := fileIdentity(s.dir, s.name)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.spec.Name, err)
	}
	if existed {
		var format string
		err := s.db.QueryRowContext(ctx, `SELECT value FROM halo_meta WHERE key = 'format'`).Scan(&format)
		if err != nil || format != formatName {
			return s.foreign(err, "it is not a Halo store's database")
		}
		var kind, file string
		err = s.db.QueryRowContext(ctx, `SELECT (SELECT value FROM halo_meta WHERE key = 'kind'), (SELECT value FROM halo_meta WHERE key = 'file')`).Scan(&kind, &file)
		if err != nil {
			return s.foreign(err, "its settings cannot be read")
		}
		if file != ino {
			return s.foreign(nil, "it was not made here (it was copied, or came with the repository)")
		}
		if kind == s.spec.Kind {
			return nil
		}
		// The declaration changed its kind: the old index is of no use.
		return s.recreate(ctx, ino)
	}
	return s.create(ctx, ino)
}

func (s *sqliteStore) foreign(err error, why string) error {
	msg := fmt.Sprintf("store %s: %s/%s: %s: run halo index --rebuild %s to make it again", s.spec.Name, storesDir, s.name, why, s.spec.Name)
	return &storeError{code: CodeCorrupt, msg: msg, err: err}
}

// create makes the schema in an empty database.
func (s *sqliteStore) create(ctx context.Context, ino string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.sqlErr(err)
	}
	defer tx.Rollback()
	var tables int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&tables); err != nil {
		return s.foreign(err, "it cannot be read")
	}
	if tables > 0 {
		return s.foreign(nil, "it is not a Halo store's database")
	}
	tx.Rollback()
	// WAL is a setting of the file, made once, here: a database that is not the store's is
	// never switched to it (opening one changes nothing on disk).
	if _, err := s.db.ExecContext(ctx, `PRAGMA journal_mode=WAL`); err != nil {
		return s.sqlErr(err)
	}
	if tx, err = s.db.BeginTx(ctx, nil); err != nil {
		return s.sqlErr(err)
	}
	defer tx.Rollback()
	schema := sqliteSchema
	if s.spec.Kind == File {
		schema += ftsSchema
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return s.sqlErr(err)
	}
	for k, v := range map[string]string{"format": formatName, "kind": s.spec.Kind, "name": s.spec.Name, "file": ino, "gen": "0",
		"chunking": "", "embedding": "", "dims": "0"} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO halo_meta(key, value) VALUES (?, ?)`, k, v); err != nil {
			return s.sqlErr(err)
		}
	}
	return s.sqlErr(tx.Commit())
}

// recreate empties the database and makes the schema again.
func (s *sqliteStore) recreate(ctx context.Context, ino string) error {
	for _, t := range []string{"chunks_fts", "chunks", "files", "halo_meta"} {
		if _, err := s.db.ExecContext(ctx, `DROP TABLE IF EXISTS `+t); err != nil {
			return s.sqlErr(err)
		}
	}
	s.mu.Lock()
	s.vecs, s.vecGen = nil, 0
	s.mu.Unlock()
	return s.create(ctx, ino)
}

// sqlErr gives a database error its code: a corrupt or foreign file is STORE_CORRUPT.
func (s *sqliteStore) sqlErr(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlite3.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.CORRUPT, sqlite3.NOTADB:
			return s.foreign(err, "the database is damaged")
		}
	}
	return fmt.Errorf("store %s: %w", s.spec.Name, err)
}

func (s *sqliteStore) where() string { return storesDir + "/" + s.name }

func (s *sqliteStore) lock(ctx context.Context, wait func()) (func(), error) {
	return lockFile(ctx, s.dir, s.spec.Name+".lock", wait)
}

func (s *sqliteStore) close() error {
	var err error
	if s.db != nil {
		err = s.db.Close()
	}
	if s.bulk != nil {
		s.bulk.Close()
	}
	s.dir.Close()
	return err
}

// reset removes the database and its side files and makes it anew (halo index --rebuild).
func (s *sqliteStore) reset(ctx context.Context) error {
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
	if s.bulk != nil {
		s.bulk.Close()
		s.bulk = nil
	}
	if err := removeDatabase(s.dir, s.sideFiles()); err != nil {
		return fmt.Errorf("store %s: %w", s.spec.Name, err)
	}
	s.mu.Lock()
	s.vecs, s.vecGen = nil, 0
	s.mu.Unlock()
	return s.open()
}

// removeDatabase removes a store's database files from .halo/stores, and nothing else.
func removeDatabase(dir *os.Root, names []string) error {
	for _, f := range names {
		if err := dir.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// RemoveDatabase removes the SQLite database of store name (and of its mock) under the
// project's .halo/stores, whatever it holds: halo index --rebuild of a store whose database
// cannot be opened. Nothing else is touched.
func RemoveDatabase(projectDir, name string, mock bool) error {
	root, err := os.OpenRoot(projectDir)
	if err != nil {
		return err
	}
	defer root.Close()
	dir, err := storesFolder(root)
	if err != nil {
		return err
	}
	defer dir.Close()
	file := name + ".db"
	if mock {
		file = name + ".mock.db"
	}
	unlock, err := lockFile(context.Background(), dir, name+".lock", nil)
	if err != nil {
		return err
	}
	defer unlock()
	return removeDatabase(dir, []string{file, file + "-wal", file + "-shm", file + "-journal"})
}

func (s *sqliteStore) meta(ctx context.Context) (indexMeta, error) {
	var m indexMeta
	var dims string
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT value FROM halo_meta WHERE key = 'chunking'),
		(SELECT value FROM halo_meta WHERE key = 'embedding'), (SELECT value FROM halo_meta WHERE key = 'dims')`).Scan(&m.chunking, &m.embedding, &dims)
	if err != nil {
		return m, s.sqlErr(err)
	}
	m.dims, _ = strconv.Atoi(dims)
	return m, nil
}

func (s *sqliteStore) setMeta(ctx context.Context, m indexMeta) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		for k, v := range map[string]string{"chunking": m.chunking, "embedding": m.embedding, "dims": strconv.Itoa(m.dims)} {
			if _, err := tx.ExecContext(ctx, `UPDATE halo_meta SET value = ? WHERE key = ?`, v, k); err != nil {
				return err
			}
		}
		return nil
	}, nil)
}

// write runs fn in a write transaction that bumps the generation. After a commit, vectors
// (when not nil) updates the vectors in memory, if they are of the generation before this
// write; if another process wrote since they were loaded, they are loaded again at the next
// search instead.
func (s *sqliteStore) write(ctx context.Context, fn func(tx *sql.Tx) error, vectors func(v *vectors)) error {
	return s.writeOn(ctx, s.db, fn, vectors)
}

// writeOn is write on a connection of db.
func (s *sqliteStore) writeOn(ctx context.Context, db interface {
	BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
}, fn func(tx *sql.Tx) error, vectors func(v *vectors)) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return s.sqlErr(err)
	}
	defer tx.Rollback()
	var gen int64
	if err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM halo_meta WHERE key = 'gen'`).Scan(&gen); err != nil {
		return s.sqlErr(err)
	}
	if err := fn(tx); err != nil {
		return s.sqlErr(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE halo_meta SET value = ? WHERE key = 'gen'`, strconv.FormatInt(gen+1, 10)); err != nil {
		return s.sqlErr(err)
	}
	if err := tx.Commit(); err != nil {
		return s.sqlErr(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.vecs != nil && s.vecGen == gen {
		if vectors != nil {
			vectors(s.vecs)
		}
		s.vecGen = gen + 1
	}
	return nil
}

func (s *sqliteStore) forgetFiles(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if s.spec.Kind == File {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(chunks_fts) VALUES('delete-all')`); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE file_id IS NOT NULL`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM files`)
		return err
	}, func(v *vectors) { s.vecs = nil })
}

func (s *sqliteStore) dropVectors(ctx context.Context) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks SET vec = NULL`); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE halo_meta SET value = '0' WHERE key = 'dims'`)
		return err
	}, func(v *vectors) { s.vecs = nil })
}

func (s *sqliteStore) files(ctx context.Context) (map[string]fileState, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, size, mtime, hash FROM files`)
	if err != nil {
		return nil, s.sqlErr(err)
	}
	defer rows.Close()
	out := map[string]fileState{}
	for rows.Next() {
		var p string
		var st fileState
		if err := rows.Scan(&p, &st.Size, &st.ModTime, &st.Hash); err != nil {
			return nil, s.sqlErr(err)
		}
		out[p] = st
	}
	return out, s.sqlErr(rows.Err())
}

// writeFiles writes a batch of files in one transaction. The full-text index is written by
// two statements for the whole batch (its rows out, then in): FTS5 flushes what it holds in
// memory at every statement that touches it, and a flush per file was most of the time of
// indexing. A batch of at least splitMinBytes of new text, on a machine of more than one core,
// is indexed by two: the last part of its chunks on a goroutine of its own, into a part added
// to the index before the commit (ftspart.go).
func (s *sqliteStore) writeFiles(ctx context.Context, changes []fileChange) (int, error) {
	var newBytes int
	for _, c := range changes {
		for _, ch := range c.chunks {
			newBytes += len(ch.Title) + len(ch.Text)
		}
	}
	var db interface {
		BeginTx(context.Context, *sql.TxOptions) (*sql.Tx, error)
	} = s.db
	split := s.spec.Kind == File && s.bulk != nil && newBytes >= splitMinBytes && runtime.GOMAXPROCS(0) > 1
	if split {
		conn, err := s.bulk.Conn(ctx)
		if err != nil {
			return 0, s.sqlErr(err)
		}
		defer conn.Close()
		db = conn
	}
	written := 0
	var dropped []int64
	err := s.writeOn(ctx, db, func(tx *sql.Tx) error {
		written, dropped = 0, dropped[:0]
		// The files whose chunks go: the changed and the removed ones.
		for _, q := range []string{`CREATE TEMP TABLE IF NOT EXISTS gone (path TEXT PRIMARY KEY)`, `DELETE FROM temp.gone`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		addGone, err := tx.PrepareContext(ctx, `INSERT OR IGNORE INTO temp.gone(path) VALUES (?)`)
		if err != nil {
			return err
		}
		defer addGone.Close()
		for _, c := range changes {
			if !c.touch {
				if _, err := addGone.ExecContext(ctx, c.path); err != nil {
					return err
				}
			}
		}
		rows, err := tx.QueryContext(ctx, `SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id JOIN temp.gone g ON g.path = f.path`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			dropped = append(dropped, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if s.spec.Kind == File && len(dropped) > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(chunks_fts, rowid, title, text)
				SELECT 'delete', c.id, c.title, c.text FROM chunks c JOIN files f ON f.id = c.file_id JOIN temp.gone g ON g.path = f.path`); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`DELETE FROM chunks WHERE file_id IN (SELECT f.id FROM files f JOIN temp.gone g ON g.path = f.path)`,
			`DELETE FROM files WHERE path IN (SELECT path FROM temp.gone)`,
		} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		// The new chunks' ids follow the last one, in the order of changes.
		var last int64
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM chunks`).Scan(&last); err != nil {
			return err
		}
		var partRows []ftsRow
		if split {
			partRows = splitRows(changes, last, newBytes)
		}
		if len(partRows) > 0 {
			mid := partRows[0].id - 1 // the chunks after mid are the part's
			var part *ftsPart
			var partErr error
			partCtx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				part, partErr = buildPart(partCtx, partRows)
			}()
			// On every way out, the part's goroutine has ended.
			defer func() { cancel(); <-done }()
			err := s.insertFiles(ctx, tx, changes, last, &written)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, title, text) SELECT id, title, text FROM chunks WHERE id > ? AND id <= ?`, last, mid); err != nil {
				return err
			}
			// Flushed, so that the structure record addPart extends is the whole of this
			// connection's, and nothing is left to write at the commit.
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(chunks_fts) VALUES('flush')`); err != nil {
				return err
			}
			if <-done; partErr != nil {
				return fmt.Errorf("index a part of the batch: %w", partErr)
			}
			added, err := addPart(ctx, tx, part)
			if err != nil || added {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, title, text) SELECT id, title, text FROM chunks WHERE id > ?`, mid)
			return err
		}
		if err := s.insertFiles(ctx, tx, changes, last, &written); err != nil {
			return err
		}
		if s.spec.Kind == File && written > 0 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO chunks_fts(rowid, title, text) SELECT id, title, text FROM chunks WHERE id > ?`, last); err != nil {
				return err
			}
		}
		return nil
	}, func(v *vectors) {
		for _, id := range dropped {
			v.remove(id)
		}
	})
	return written, err
}

// insertFiles writes the rows of changes' files and chunks, the chunks with the ids after
// last, counting them into written.
func (s *sqliteStore) insertFiles(ctx context.Context, tx *sql.Tx, changes []fileChange, last int64, written *int) error {
	insFile, err := tx.PrepareContext(ctx, `INSERT INTO files(path, size, mtime, hash) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insFile.Close()
	insChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks(id, file_id, key, start_line, end_line, title, text) VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insChunk.Close()
	id := last
	for _, c := range changes {
		switch {
		case c.touch:
			if _, err := tx.ExecContext(ctx, `UPDATE files SET size = ?, mtime = ? WHERE path = ?`, c.state.Size, c.state.ModTime, c.path); err != nil {
				return err
			}
			continue
		case c.remove:
			continue
		}
		res, err := insFile.ExecContext(ctx, c.path, c.state.Size, c.state.ModTime, c.state.Hash)
		if err != nil {
			return err
		}
		fileID, err := res.LastInsertId()
		if err != nil {
			return err
		}
		for n, ch := range c.chunks {
			id++
			if _, err := insChunk.ExecContext(ctx, id, fileID, fileKey(c.path, n), ch.Start, ch.End, ch.Title, ch.Text); err != nil {
				return err
			}
			*written++
		}
	}
	return nil
}

// splitRows is the part of changes' new chunks a second goroutine indexes: the last ones,
// half of their text, with the ids insertFiles gives them after last.
func splitRows(changes []fileChange, last int64, total int) []ftsRow {
	var out []ftsRow
	id, seen := last, 0
	for _, c := range changes {
		if c.touch || c.remove {
			continue
		}
		for _, ch := range c.chunks {
			id++
			if seen >= total/2 {
				out = append(out, ftsRow{id: id, title: ch.Title, text: ch.Text})
			}
			seen += len(ch.Title) + len(ch.Text)
		}
	}
	return out
}

func (s *sqliteStore) staleCount(ctx context.Context) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE vec IS NULL`).Scan(&n)
	return n, s.sqlErr(err)
}

func (s *sqliteStore) stale(ctx context.Context, limit int) ([]row, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, text FROM chunks WHERE vec IS NULL ORDER BY id LIMIT ?`, limit)
	if err != nil {
		return nil, s.sqlErr(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.title, &r.text); err != nil {
			return nil, s.sqlErr(err)
		}
		out = append(out, r)
	}
	return out, s.sqlErr(rows.Err())
}

// checkDims sets the index's vector length on its first vector, and refuses one of another.
func (s *sqliteStore) checkDims(ctx context.Context, tx *sql.Tx, vecs [][]float32) error {
	var dims int
	if err := tx.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM halo_meta WHERE key = 'dims'`).Scan(&dims); err != nil {
		return err
	}
	if err := sameLength(s.spec, dims, vecs); err != nil {
		return err
	}
	if dims == 0 && len(vecs) > 0 {
		_, err := tx.ExecContext(ctx, `UPDATE halo_meta SET value = ? WHERE key = 'dims'`, strconv.Itoa(len(vecs[0])))
		return err
	}
	return nil
}

// sameLength refuses vectors whose length is not dims (when dims is known) or not all one.
func sameLength(spec Spec, dims int, vecs [][]float32) error {
	for _, v := range vecs {
		if dims == 0 {
			dims = len(v)
		}
		if len(v) != dims {
			return &storeError{code: CodeDimension, msg: fmt.Sprintf("store %s: %s returned a vector of %d dimensions; the index holds vectors of %d (a changed model or dimensions: rebuilds it: halo index --rebuild %s)",
				spec.Name, spec.Embed, len(v), dims, spec.Name)}
		}
	}
	return nil
}

func (s *sqliteStore) setVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	return s.write(ctx, func(tx *sql.Tx) error {
		if err := s.checkDims(ctx, tx, vecs); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `UPDATE chunks SET vec = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, id := range ids {
			if _, err := st.ExecContext(ctx, encodeVector(vecs[i]), id); err != nil {
				return err
			}
		}
		return nil
	}, func(v *vectors) {
		for i, id := range ids {
			v.put(id, vecs[i])
		}
	})
}

func (s *sqliteStore) putDocs(ctx context.Context, docs []Doc, vecs [][]float32) error {
	ids := make([]int64, len(docs))
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := s.checkDims(ctx, tx, vecs); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, `INSERT INTO chunks(key, text, metadata, vec) VALUES (?, ?, ?, ?)
			ON CONFLICT(key) DO UPDATE SET text = excluded.text, metadata = excluded.metadata, vec = excluded.vec RETURNING id`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i, d := range docs {
			var meta any
			if d.Metadata != nil {
				b, err := json.Marshal(d.Metadata)
				if err != nil {
					return err
				}
				meta = string(b)
			}
			if err := st.QueryRowContext(ctx, docKey(d.ID), d.Text, meta, encodeVector(vecs[i])).Scan(&ids[i]); err != nil {
				return err
			}
		}
		return nil
	}, func(v *vectors) {
		for i, id := range ids {
			v.put(id, vecs[i])
		}
	})
	return err
}

func (s *sqliteStore) deleteDocs(ctx context.Context, docIDs []string) (int, error) {
	var gone []int64
	err := s.write(ctx, func(tx *sql.Tx) error {
		gone = gone[:0]
		for _, id := range docIDs {
			var rowID int64
			err := tx.QueryRowContext(ctx, `DELETE FROM chunks WHERE key = ? RETURNING id`, docKey(id)).Scan(&rowID)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			gone = append(gone, rowID)
		}
		return nil
	}, func(v *vectors) {
		for _, id := range gone {
			v.remove(id)
		}
	})
	return len(gone), err
}

func (s *sqliteStore) counts(ctx context.Context) (counts, error) {
	var c counts
	err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks WHERE file_id IS NOT NULL),
		(SELECT count(*) FROM chunks WHERE file_id IS NULL)`).Scan(&c.files, &c.chunks, &c.docs)
	return c, s.sqlErr(err)
}

// searchText ranks the chunks by BM25 against the query's words (any of them: a chunk with
// more of the rarer words ranks higher).
func (s *sqliteStore) searchText(ctx context.Context, query string, k int) ([]Hit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return []Hit{}, nil
	}
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.key, coalesce(f.path, ''), c.start_line, c.end_line, c.title, c.text, m.rank
		FROM (SELECT rowid, rank FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) m
		JOIN chunks c ON c.id = m.rowid LEFT JOIN files f ON f.id = c.file_id ORDER BY m.rank, c.id`, strings.Join(quoted, " OR "), k)
	if err != nil {
		return nil, s.sqlErr(err)
	}
	defer rows.Close()
	out := []Hit{}
	for rows.Next() {
		var key, path, title, text string
		var start, end int
		var rank float64
		if err := rows.Scan(&key, &path, &start, &end, &title, &text, &rank); err != nil {
			return nil, s.sqlErr(err)
		}
		out = append(out, hitOf(key, path, start, end, title, text, rankScore(-rank), nil))
	}
	return out, s.sqlErr(rows.Err())
}

// searchVector scans the vectors in memory, loading them first when another process (or a
// reopened database) changed them.
func (s *sqliteStore) searchVector(ctx context.Context, vec []float32, k int) ([]Hit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gen int64
	if err := s.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM halo_meta WHERE key = 'gen'`).Scan(&gen); err != nil {
		return nil, s.sqlErr(err)
	}
	if s.vecs == nil || s.vecGen != gen {
		if err := s.loadVectors(ctx, gen); err != nil {
			return nil, err
		}
	}
	if s.vecs.len() == 0 {
		return []Hit{}, nil
	}
	if len(vec) != s.vecs.dim {
		return nil, sameLength(s.spec, s.vecs.dim, [][]float32{vec})
	}
	best := s.vecs.search(normalized(vec), k)
	return s.hits(ctx, best)
}

// loadVectors reads every vector into memory (with s.mu held).
func (s *sqliteStore) loadVectors(ctx context.Context, gen int64) error {
	var dims int
	if err := s.db.QueryRowContext(ctx, `SELECT CAST(value AS INTEGER) FROM halo_meta WHERE key = 'dims'`).Scan(&dims); err != nil {
		return s.sqlErr(err)
	}
	v := newVectors(dims)
	rows, err := s.db.QueryContext(ctx, `SELECT id, vec FROM chunks WHERE vec IS NOT NULL ORDER BY id`)
	if err != nil {
		return s.sqlErr(err)
	}
	defer rows.Close()
	buf := make([]float32, dims)
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return s.sqlErr(err)
		}
		if !decodeVector(b, buf) {
			return s.foreign(nil, fmt.Sprintf("a vector is %d bytes, not %d dimensions", len(b), dims))
		}
		v.put(id, buf)
	}
	if err := rows.Err(); err != nil {
		return s.sqlErr(err)
	}
	s.vecs, s.vecGen = v, gen
	return nil
}

// hits reads the rows of search results, in their order.
func (s *sqliteStore) hits(ctx context.Context, best []scored) ([]Hit, error) {
	out := make([]Hit, 0, len(best))
	st, err := s.db.PrepareContext(ctx, `SELECT c.key, coalesce(f.path, ''), c.start_line, c.end_line, c.title, c.text, c.metadata
		FROM chunks c LEFT JOIN files f ON f.id = c.file_id WHERE c.id = ?`)
	if err != nil {
		return nil, s.sqlErr(err)
	}
	defer st.Close()
	for _, b := range best {
		var key, path, title, text string
		var start, end int
		var meta []byte
		err := st.QueryRowContext(ctx, b.id).Scan(&key, &path, &start, &end, &title, &text, &meta)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, s.sqlErr(err)
		}
		out = append(out, hitOf(key, path, start, end, title, text, float64(b.score), meta))
	}
	return out, nil
}
