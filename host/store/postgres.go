package store

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// The PostgreSQL index, for stores shared by several halo serve replicas or too large for one
// machine: three tables per store, halo_store_<name>_{meta,files,chunks}. A File store ranks
// its chunks with a tsvector (English stemming, headings weighted above text) and
// ts_rank_cd; a VectorStore keeps its vectors in a pgvector column with an HNSW index
// (cosine distance), searched approximately. pgvector must be installed in the server
// (docs/stores.md says how); the store runs CREATE EXTENSION IF NOT EXISTS vector.

type pgStore struct {
	spec Spec
	pool *pgxpool.Pool
	// t is the tables' name prefix; host names the server for people.
	t    string
	host string
	// lockKey is the advisory lock's key, from the prefix.
	lockKey int64
}

// pgMaxIndexed is the longest vector pgvector's HNSW index takes as a vector; up to
// pgMaxHalf it is indexed as a halfvec, past that searched without an index.
const (
	pgMaxIndexed = 2000
	pgMaxHalf    = 4000
)

func openPostgres(ctx context.Context, spec Spec) (*pgStore, error) {
	cfg, err := pgxpool.ParseConfig(spec.Store)
	if err != nil {
		return nil, fmt.Errorf("store %s: store: %v", spec.Name, redactURL(err.Error(), spec.Store))
	}
	s := &pgStore{spec: spec, t: pgPrefix(spec.Name), host: pgHost(spec.Store)}
	sum := sha256.Sum256([]byte(s.t))
	s.lockKey = int64(binary.BigEndian.Uint64(sum[:8]))
	if spec.Kind == VectorStore {
		// The extension is made on a connection of its own first, so the pool's connections
		// can register its types as they connect.
		conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
		if err != nil {
			return nil, s.err(err)
		}
		_, err = conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`)
		conn.Close(ctx)
		if err != nil {
			return nil, fmt.Errorf("store %s: pgvector is not available in %s (%v): install it in the server (see docs/stores.md)", spec.Name, s.host, err)
		}
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error { return pgxvec.RegisterTypes(ctx, c) }
	}
	cfg.MaxConns = 8
	if s.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, s.err(err)
	}
	if err := s.init(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// pgPrefix is the store's table prefix: halo_store_ and its name, lower-cased with '-' as
// '_', shortened with a hash when it would make an identifier over 63 bytes.
func pgPrefix(name string) string {
	p := "halo_store_" + strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if len(p) > 50 {
		sum := sha256.Sum256([]byte(name))
		p = p[:40] + "_" + hex.EncodeToString(sum[:4])
	}
	return p
}

// pgHost is the server as a person names it: host and database, no password.
func pgHost(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "PostgreSQL"
	}
	host := u.Host
	if host == "" {
		host = u.Query().Get("host")
	}
	return "postgres://" + host + u.Path
}

// redactURL takes a URL's password out of a message.
func redactURL(msg, dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

func (s *pgStore) err(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store %s (%s): %s", s.spec.Name, s.host, redactURL(err.Error(), s.spec.Store))
}

func (s *pgStore) where() string { return s.host + " (" + s.t + "_*)" }

func (s *pgStore) close() error { s.pool.Close(); return nil }

func (s *pgStore) init(ctx context.Context) error {
	unlock, err := s.lock(ctx, nil)
	if err != nil {
		return err
	}
	defer unlock()
	var hasMeta, hasChunks bool
	if err := s.pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`, s.t+"_meta", s.t+"_chunks").Scan(&hasMeta, &hasChunks); err != nil {
		return s.err(err)
	}
	if !hasMeta {
		if hasChunks {
			return s.foreign("its tables are not a Halo store's")
		}
		return s.create(ctx)
	}
	var format, kind string
	err = s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT coalesce((SELECT value FROM %[1]s_meta WHERE key = 'format'), ''),
		coalesce((SELECT value FROM %[1]s_meta WHERE key = 'kind'), '')`, s.t)).Scan(&format, &kind)
	if err != nil || format != formatName {
		return s.foreign("its tables are not a Halo store's")
	}
	if kind != s.spec.Kind {
		if err := s.drop(ctx); err != nil {
			return err
		}
		return s.create(ctx)
	}
	return nil
}

func (s *pgStore) foreign(why string) error {
	return corruptf("store %s: %s in %s: %s: run halo index --rebuild %s to make it again", s.spec.Name, s.t+"_*", s.host, why, s.spec.Name)
}

func (s *pgStore) create(ctx context.Context) error {
	chunks := fmt.Sprintf(`CREATE TABLE %[1]s_chunks (id bigserial PRIMARY KEY, file_id bigint REFERENCES %[1]s_files(id) ON DELETE CASCADE,
		key text NOT NULL UNIQUE, start_line int NOT NULL DEFAULT 0, end_line int NOT NULL DEFAULT 0, title text NOT NULL DEFAULT '',
		text text NOT NULL, metadata jsonb`, s.t)
	if s.spec.Kind == File {
		chunks += `, tsv tsvector GENERATED ALWAYS AS (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', text), 'B')) STORED)`
	} else {
		chunks += `, vec vector)`
	}
	stmts := []string{
		fmt.Sprintf(`CREATE TABLE %s_meta (key text PRIMARY KEY, value text NOT NULL)`, s.t),
		fmt.Sprintf(`CREATE TABLE %s_files (id bigserial PRIMARY KEY, path text NOT NULL UNIQUE, size bigint NOT NULL, mtime bigint NOT NULL, hash bytea NOT NULL)`, s.t),
		chunks,
		fmt.Sprintf(`CREATE INDEX ON %[1]s_chunks (file_id)`, s.t),
	}
	if s.spec.Kind == File {
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX ON %[1]s_chunks USING gin (tsv)`, s.t))
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.err(err)
	}
	defer tx.Rollback(ctx)
	for _, st := range stmts {
		if _, err := tx.Exec(ctx, st); err != nil {
			return s.err(err)
		}
	}
	for k, v := range map[string]string{"format": formatName, "kind": s.spec.Kind, "name": s.spec.Name, "chunking": "", "embedding": "", "dims": "0"} {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`INSERT INTO %s_meta (key, value) VALUES ($1, $2)`, s.t), k, v); err != nil {
			return s.err(err)
		}
	}
	return s.err(tx.Commit(ctx))
}

func (s *pgStore) drop(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s_chunks, %[1]s_files, %[1]s_meta`, s.t))
	return s.err(err)
}

// DropPostgres drops the tables of store name in the PostgreSQL database at dsn, whatever
// they hold: halo index --rebuild of a store whose tables cannot be opened. No other table
// is touched.
func DropPostgres(ctx context.Context, dsn, name string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("store %s (%s): %s", name, pgHost(dsn), redactURL(err.Error(), dsn))
	}
	defer conn.Close(ctx)
	t := pgPrefix(name)
	_, err = conn.Exec(ctx, fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s_chunks, %[1]s_files, %[1]s_meta`, t))
	return err
}

func (s *pgStore) reset(ctx context.Context) error {
	if err := s.drop(ctx); err != nil {
		return err
	}
	return s.create(ctx)
}

// lock takes the store's advisory lock on a connection of its own, asking again every
// lockPoll while another process holds it.
func (s *pgStore) lock(ctx context.Context, wait func()) (func(), error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.err(err)
	}
	err = poll(ctx, wait, func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, s.lockKey).Scan(&ok)
		return ok, err
	})
	if err != nil {
		conn.Release()
		if ctx.Err() == nil {
			err = s.err(err)
		}
		return nil, err
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, s.lockKey); err != nil {
			// A connection that could not unlock must not go back to the pool locked.
			conn.Conn().Close(ctx)
		}
		conn.Release()
	}, nil
}

func (s *pgStore) meta(ctx context.Context) (indexMeta, error) {
	var m indexMeta
	var dims string
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT value FROM %[1]s_meta WHERE key = 'chunking'),
		(SELECT value FROM %[1]s_meta WHERE key = 'embedding'), (SELECT value FROM %[1]s_meta WHERE key = 'dims')`, s.t)).Scan(&m.chunking, &m.embedding, &dims)
	m.dims, _ = strconv.Atoi(dims)
	return m, s.err(err)
}

func (s *pgStore) setMeta(ctx context.Context, m indexMeta) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		for k, v := range map[string]string{"chunking": m.chunking, "embedding": m.embedding, "dims": strconv.Itoa(m.dims)} {
			if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s_meta SET value = $1 WHERE key = $2`, s.t), v, k); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *pgStore) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return s.err(err)
	}
	defer tx.Rollback(ctx)
	if err := fn(tx); err != nil {
		var se *storeError
		if errors.As(err, &se) {
			return err
		}
		return s.err(err)
	}
	return s.err(tx.Commit(ctx))
}

func (s *pgStore) forgetFiles(ctx context.Context) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s_files`, s.t))
		return err
	})
}

func (s *pgStore) dropVectors(ctx context.Context) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		for _, st := range []string{`DROP INDEX IF EXISTS %[1]s_vec_idx`, `ALTER TABLE %[1]s_chunks ALTER COLUMN vec TYPE vector USING NULL`,
			`UPDATE %[1]s_meta SET value = '0' WHERE key = 'dims'`} {
			if _, err := tx.Exec(ctx, fmt.Sprintf(st, s.t)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *pgStore) files(ctx context.Context) (map[string]fileState, error) {
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT path, size, mtime, hash FROM %s_files`, s.t))
	if err != nil {
		return nil, s.err(err)
	}
	defer rows.Close()
	out := map[string]fileState{}
	for rows.Next() {
		var p string
		var st fileState
		if err := rows.Scan(&p, &st.Size, &st.ModTime, &st.Hash); err != nil {
			return nil, s.err(err)
		}
		out[p] = st
	}
	return out, s.err(rows.Err())
}

func (s *pgStore) writeFiles(ctx context.Context, changes []fileChange) (int, error) {
	written := 0
	err := s.tx(ctx, func(tx pgx.Tx) error {
		written = 0
		for _, c := range changes {
			switch {
			case c.touch:
				if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s_files SET size = $1, mtime = $2 WHERE path = $3`, s.t), c.state.Size, c.state.ModTime, c.path); err != nil {
					return err
				}
				continue
			case c.remove:
				if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s_files WHERE path = $1`, s.t), c.path); err != nil {
					return err
				}
				continue
			}
			var fileID int64
			err := tx.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %s_files (path, size, mtime, hash) VALUES ($1, $2, $3, $4)
				ON CONFLICT (path) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, hash = excluded.hash RETURNING id`, s.t),
				c.path, c.state.Size, c.state.ModTime, c.state.Hash).Scan(&fileID)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s_chunks WHERE file_id = $1`, s.t), fileID); err != nil {
				return err
			}
			rows := make([][]any, len(c.chunks))
			for n, ch := range c.chunks {
				rows[n] = []any{fileID, fileKey(c.path, n), ch.Start, ch.End, ch.Title, ch.Text}
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{s.t + "_chunks"}, []string{"file_id", "key", "start_line", "end_line", "title", "text"}, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			written += len(rows)
		}
		return nil
	})
	return written, err
}

func (s *pgStore) staleCount(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM %s_chunks WHERE vec IS NULL`, s.t)).Scan(&n)
	return n, s.err(err)
}

func (s *pgStore) stale(ctx context.Context, limit int) ([]row, error) {
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT id, title, text FROM %s_chunks WHERE vec IS NULL ORDER BY id LIMIT $1`, s.t), limit)
	if err != nil {
		return nil, s.err(err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.title, &r.text); err != nil {
			return nil, s.err(err)
		}
		out = append(out, r)
	}
	return out, s.err(rows.Err())
}

// checkDims fixes the vector column's length and makes its index with the first vector,
// and refuses vectors of another length.
func (s *pgStore) checkDims(ctx context.Context, tx pgx.Tx, vecs [][]float32) error {
	var dims int
	if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT value::int FROM %s_meta WHERE key = 'dims' FOR UPDATE`, s.t)).Scan(&dims); err != nil {
		return err
	}
	if err := sameLength(s.spec, dims, vecs); err != nil {
		return err
	}
	if dims != 0 || len(vecs) == 0 {
		return nil
	}
	n := len(vecs[0])
	stmts := []string{fmt.Sprintf(`ALTER TABLE %s_chunks ALTER COLUMN vec TYPE vector(%d)`, s.t, n)}
	switch {
	case n <= pgMaxIndexed:
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX %[1]s_vec_idx ON %[1]s_chunks USING hnsw (vec vector_cosine_ops)`, s.t))
	case n <= pgMaxHalf:
		stmts = append(stmts, fmt.Sprintf(`CREATE INDEX %[1]s_vec_idx ON %[1]s_chunks USING hnsw ((vec::halfvec(%[2]d)) halfvec_cosine_ops)`, s.t, n))
	}
	stmts = append(stmts, fmt.Sprintf(`UPDATE %s_meta SET value = '%d' WHERE key = 'dims'`, s.t, n))
	for _, st := range stmts {
		if _, err := tx.Exec(ctx, st); err != nil {
			return err
		}
	}
	return nil
}

func (s *pgStore) setVectors(ctx context.Context, ids []int64, vecs [][]float32) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.checkDims(ctx, tx, vecs); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for i, id := range ids {
			b.Queue(fmt.Sprintf(`UPDATE %s_chunks SET vec = $1 WHERE id = $2`, s.t), pgvector.NewVector(vecs[i]), id)
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

func (s *pgStore) putDocs(ctx context.Context, docs []Doc, vecs [][]float32) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		if err := s.checkDims(ctx, tx, vecs); err != nil {
			return err
		}
		b := &pgx.Batch{}
		for i, d := range docs {
			var meta []byte
			if d.Metadata != nil {
				var err error
				if meta, err = json.Marshal(d.Metadata); err != nil {
					return err
				}
			}
			b.Queue(fmt.Sprintf(`INSERT INTO %s_chunks (key, text, metadata, vec) VALUES ($1, $2, $3, $4)
				ON CONFLICT (key) DO UPDATE SET text = excluded.text, metadata = excluded.metadata, vec = excluded.vec`, s.t),
				docKey(d.ID), d.Text, meta, pgvector.NewVector(vecs[i]))
		}
		return tx.SendBatch(ctx, b).Close()
	})
}

func (s *pgStore) deleteDocs(ctx context.Context, ids []string) (int, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = docKey(id)
	}
	var n int64
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s_chunks WHERE key = ANY($1)`, s.t), keys)
		n = tag.RowsAffected()
		return err
	})
	return int(n), err
}

func (s *pgStore) counts(ctx context.Context) (counts, error) {
	var c counts
	err := s.pool.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s_files), (SELECT count(*) FROM %[1]s_chunks WHERE file_id IS NOT NULL),
		(SELECT count(*) FROM %[1]s_chunks WHERE file_id IS NULL)`, s.t)).Scan(&c.files, &c.chunks, &c.docs)
	return c, s.err(err)
}

// searchText ranks chunks with ts_rank_cd (normalised into [0, 1) by rank/(rank+1)) against
// any of the query's words.
func (s *pgStore) searchText(ctx context.Context, query string, k int) ([]Hit, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return []Hit{}, nil
	}
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT c.key, coalesce(f.path, ''), c.start_line, c.end_line, c.title, c.text, ts_rank_cd(c.tsv, q, 32) AS r
		FROM %[1]s_chunks c LEFT JOIN %[1]s_files f ON f.id = c.file_id, to_tsquery('english', $1) q
		WHERE c.tsv @@ q ORDER BY r DESC, c.id LIMIT $2`, s.t), strings.Join(terms, " | "), k)
	if err != nil {
		return nil, s.err(err)
	}
	defer rows.Close()
	out := []Hit{}
	for rows.Next() {
		var key, path, title, text string
		var start, end int
		var r float64
		if err := rows.Scan(&key, &path, &start, &end, &title, &text, &r); err != nil {
			return nil, s.err(err)
		}
		out = append(out, hitOf(key, path, start, end, title, text, r, nil))
	}
	return out, s.err(rows.Err())
}

// searchVector asks the HNSW index for the k nearest chunks by cosine distance, with a
// search list of 100, or 4k when that is more (hnsw.ef_search; pgvector's default is 40), so
// the k are the index's best. The query orders
// by the distance alone: pgvector's index answers only that order (a second key, even the
// id, turns the search into a scan of every row).
func (s *pgStore) searchVector(ctx context.Context, vec []float32, k int) ([]Hit, error) {
	var out []Hit
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var dims int
		if err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT value::int FROM %s_meta WHERE key = 'dims'`, s.t)).Scan(&dims); err != nil {
			return err
		}
		if dims == 0 {
			out = []Hit{}
			return nil
		}
		if err := sameLength(s.spec, dims, [][]float32{vec}); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL hnsw.ef_search = %d`, max(100, 4*k))); err != nil {
			return err
		}
		dist := "c.vec <=> $1"
		if dims > pgMaxIndexed && dims <= pgMaxHalf {
			dist = fmt.Sprintf("c.vec::halfvec(%d) <=> $1::halfvec(%d)", dims, dims)
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT c.key, coalesce(f.path, ''), c.start_line, c.end_line, c.title, c.text, c.metadata, %[2]s AS d
			FROM %[1]s_chunks c LEFT JOIN %[1]s_files f ON f.id = c.file_id WHERE c.vec IS NOT NULL ORDER BY %[2]s LIMIT $2`, s.t, dist),
			pgvector.NewVector(vec), k)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = []Hit{}
		for rows.Next() {
			var key, path, title, text string
			var start, end int
			var meta []byte
			var d float64
			if err := rows.Scan(&key, &path, &start, &end, &title, &text, &meta, &d); err != nil {
				return err
			}
			if math.IsNaN(d) {
				continue // a zero vector is near nothing
			}
			out = append(out, hitOf(key, path, start, end, title, text, 1-d, meta))
		}
		return rows.Err()
	})
	return out, err
}
