package runstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// How the embedded store finds a run's row: by its key, a 64-bit number its id turns back
// into, and the id (halo_runs_key, an index of (key, id) since schema step 9).
//
// An index of the ids themselves put each new row's entry at a random place in it: with a
// commit of 100 rows each dirtied a page of its own, which the commit wrote twice (to the
// log, then the checkpoint's copy into the database), half of the bytes a save wrote
// (BenchmarkCommitLayout). The ids a store with GroupCommit makes (NewRunID, NewLongRunID:
// halo mcp's and halo serve's) are E(T): T the next number of a block this process took from
// halo_key_state, so that a commit's entries land together at the end of the index; E a
// permutation of 64-bit numbers keyed by a secret the store keeps in halo_secrets, so that
// the ids still look random (their first letters tell runs apart, for completion and text
// queries) and one cannot be worked out from another. E is a Feistel network whose round
// function is AES with that key.
//
// The key of an id is a function of the id alone (runKeys.of), whoever made it, so that (key,
// id) is unique exactly when the id is: ids of 16 or 32 hex digits (what halo made before
// step 9 too, and what other stores hand over) key as E⁻¹ of their first 16, and land
// wherever that says; any other id keys as 0. Neither needs the store to have made it.

// keyBlock is how many keys a process takes from halo_key_state at a time: one small write
// for that many runs.
const keyBlock = 4096

// runKeysSecret is the name of the key of E in halo_secrets.
const runKeysSecret = "run-keys"

// feistelRounds is how many rounds E has.
const feistelRounds = 6

// runKeys turns run ids into keys and keys into ids, with the store's secret.
type runKeys struct {
	block cipher.Block
}

// newRunKeys makes runKeys from a secret of 16 bytes.
func newRunKeys(secret []byte) (*runKeys, error) {
	b, err := aes.NewCipher(secret)
	if err != nil {
		return nil, fmt.Errorf("run keys: %w", err)
	}
	return &runKeys{block: b}, nil
}

// round is E's round function: AES of the round and the half. The block it encrypts goes
// to cipher.Block's method, so escapes: the caller hands in one for all of its rounds (a
// pair of arrays of each round's own were two allocations a round, 12 a key).
func (k *runKeys) round(buf *roundBuf, i int, half uint32) uint32 {
	buf.in[0] = byte(i)
	binary.BigEndian.PutUint32(buf.in[1:], half)
	k.block.Encrypt(buf.out[:], buf.in[:])
	return binary.BigEndian.Uint32(buf.out[:])
}

// A roundBuf is what round encrypts, and into.
type roundBuf struct{ in, out [aes.BlockSize]byte }

// encrypt is E.
func (k *runKeys) encrypt(v uint64) uint64 {
	buf := new(roundBuf)
	l, r := uint32(v>>32), uint32(v)
	for i := range feistelRounds {
		l, r = r, l^k.round(buf, i, r)
	}
	return uint64(l)<<32 | uint64(r)
}

// decrypt is E⁻¹.
func (k *runKeys) decrypt(v uint64) uint64 {
	buf := new(roundBuf)
	l, r := uint32(v>>32), uint32(v)
	for i := feistelRounds - 1; i >= 0; i-- {
		l, r = r^k.round(buf, i, l), l
	}
	return uint64(l)<<32 | uint64(r)
}

// of returns the key of run id: E⁻¹ of its first 16 hex digits when it has 16 or 32 (of
// either case), else 0.
func (k *runKeys) of(id string) int64 {
	if len(id) != 16 && len(id) != 32 {
		return 0
	}
	var v uint64
	for i := 0; i < 16; i++ {
		c := id[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0
		}
		v = v<<4 | uint64(c)
	}
	for i := 16; i < len(id); i++ {
		if !isHex(id[i]) {
			return 0
		}
	}
	return int64(k.decrypt(v))
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// id returns the 16 hex digits of E(key).
func (k *runKeys) id(key uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], k.encrypt(key))
	return hex.EncodeToString(b[:])
}

// keySource hands out the keys of the runs this process starts, from blocks it takes from
// halo_key_state.
type keySource struct {
	mu        sync.Mutex
	next, end uint64
}

// NewRunID returns the id of a run this process starts: 16 hex digits, E of the next key
// (see runKeys). A store without GroupCommit (halo run, halo resume: a run or two a process)
// takes no block of keys, which is a write and a sync of its own: its ids are random, and
// each row costs the page of its key as it always did. When no block can be taken (the
// database is held by another process too long, the disk is full), the id is random too,
// and the save that follows says what is wrong. Safe for concurrent use.
func (s *SQLite) NewRunID() string {
	if !s.opts.GroupCommit {
		return randomRunID()
	}
	key, err := s.nextKey()
	if err != nil {
		s.log.Warn("no run key could be taken: the run gets a random id", "error", err)
		return randomRunID()
	}
	return s.keys.id(key)
}

// randomRunID is 16 random hex digits.
func randomRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NewLongRunID returns the id of a run halo serve starts: 32 hex digits, NewRunID's 16 and
// 16 random ones, so that the id cannot be guessed even by one who knows the store's secret.
func (s *SQLite) NewLongRunID() string {
	return s.NewRunID() + randomRunID()
}

// nextKey returns the next key of this process's block, taking a new block when it is
// used up.
func (s *SQLite) nextKey() (uint64, error) {
	ks := &s.keySrc
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.next == ks.end {
		if s.w == nil {
			return 0, Errorf(CodeStore, "run keys: the run store is closed")
		}
		var first uint64
		// One statement, its own transaction: the block is the process's once it commits,
		// synced as every commit is, so no other process, nor this one after a crash, takes
		// its keys again. A counter that is not an integer, or would pass int64's range
		// (which SQLite would make a float, the same for every process), is not taken from.
		err := s.w.QueryRow(`UPDATE halo_key_state SET next = next + ?1
WHERE typeof(next) = 'integer' AND next BETWEEN 0 AND 9223372036854775807 - ?1 RETURNING next - ?1`, keyBlock).Scan(&first)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, Errorf(CodeStore, "the run store %s: halo_key_state holds no counter halo can take keys from", s.path)
		}
		if err != nil {
			return 0, s.dbErr("run keys", err)
		}
		ks.next, ks.end = first, first+keyBlock
	}
	ks.next++
	return ks.next - 1, nil
}

// loadRunKeys reads the store's secret for runKeys.
func (s *SQLite) loadRunKeys(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) error {
	var secret []byte
	err := q.QueryRowContext(ctx, `SELECT value FROM halo_secrets WHERE name = ?`, runKeysSecret).Scan(&secret)
	if errors.Is(err, sql.ErrNoRows) {
		return Errorf(CodeStore, "the run store %s has no %s secret (halo_secrets): it was changed by something other than halo", s.path, runKeysSecret)
	}
	if err != nil {
		return s.dbErr("open", err)
	}
	if s.keys, err = newRunKeys(secret); err != nil {
		return Errorf(CodeStore, "the run store %s: its %s secret (halo_secrets) is not 16 bytes", s.path, runKeysSecret)
	}
	return nil
}

// beforeKeyed, in schema step 9's transaction and before its statements, makes the store's
// secret and the key of every row there is, into temp.halo_row_keys (rowid, key): the
// step's copy of halo_runs takes them from there. Giving each row its key after the copy,
// an UPDATE a row, wrote every row again: a store of 100,000 runs took 4.7 s to migrate
// that way, 3.8 s this way (on the 2-core development machine).
func (s *SQLite) beforeKeyed(ctx context.Context, tx *sql.Tx) error {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("run keys: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO halo_secrets (name, value) VALUES (?, ?)`, runKeysSecret, secret); err != nil {
		return err
	}
	if err := s.loadRunKeys(ctx, tx); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE halo_row_keys (rid integer PRIMARY KEY, key integer NOT NULL)`); err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT rowid, id FROM halo_runs`)
	if err != nil {
		return err
	}
	var vals []any
	for rows.Next() {
		var rid int64
		var id string
		if err := rows.Scan(&rid, &id); err != nil {
			rows.Close()
			return err
		}
		if k := s.keys.of(id); k != 0 {
			vals = append(vals, rid, k)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	const per = 500 // rows a statement: 1,000 values
	for len(vals) > 0 {
		n := min(len(vals), 2*per)
		q := "INSERT INTO halo_row_keys (rid, key) VALUES (?, ?)" + strings.Repeat(", (?, ?)", n/2-1)
		if _, err := tx.ExecContext(ctx, q, vals[:n]...); err != nil {
			return err
		}
		vals = vals[n:]
	}
	return nil
}

// afterKeyed, after schema step 9's statements, indexes (key, id).
func (s *SQLite) afterKeyed(ctx context.Context, tx *sql.Tx) error {
	for _, q := range []string{`DROP TABLE temp.halo_row_keys`, `CREATE UNIQUE INDEX halo_runs_key ON halo_runs (key, id)`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}
