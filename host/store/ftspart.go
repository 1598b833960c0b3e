package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Indexing a large batch on two cores. FTS5 tokenizes a table's rows and hashes their terms
// on the one thread that writes the table, and that is most of the time of indexing; so a
// batch of new chunks is split in two (which pays because each connection of the driver has
// memory of its own: through modernc.org/sqlite, whose connections share one allocator lock,
// the same split indexed slower than one connection). The writer's connection indexes the first part into
// the store's table while a second goroutine indexes the rest into a table of the same
// columns and tokenizer in a private in-memory database (an ftsPart). Then the part's
// segments are added to the store's table as FTS5 adds the segment it writes when it flushes
// its terms to disk: the part's pages, renumbered to segment ids the table does not use, their
// terms in the table's index of pages (_idx), the part's rows' lengths (_docsize), and the
// structure record (the list of segments) and averages record (rows and tokens, what BM25
// divides by) extended to count them. The table is then what FTS5 would have made of the
// whole batch in two flushes: a query sees the same rows with the same BM25 scores.
//
// The records' layout is FTS5's (SQLite's fts5_index.c): varints as SQLite writes them, the
// structure record a 4-byte cookie, then the levels, segments and write counter, then each
// level's segments. A structure this code does not know (FTS5's second version, which tables
// that delete without content write), or a part whose segments are not all new ones at level
// 0, is not copied: the writer indexes the part's rows itself, as without a split.

// Rowids of FTS5's records in its _data table, and the bits of a page's rowid above its
// segment id.
const (
	ftsAveragesRowid  = 1
	ftsStructureRowid = 10
	ftsSegmentShift   = 37
	ftsMaxSegments    = 2000
	ftsMaxSegmentID   = 1<<16 - 1
)

// ftsTokenizer is the store's table's tokenizer, and its part's.
const ftsTokenizer = `tokenize='porter unicode61 remove_diacritics 2'`

// splitMinBytes is the least text of new chunks a batch splits: below it, opening a second
// database costs more than it saves.
const splitMinBytes = 1 << 20

// An ftsRow is a chunk to index.
type ftsRow struct {
	id          int64
	title, text string
}

// An ftsPart is an FTS5 index of some chunks, made apart, as its records and rows.
type ftsPart struct {
	structure, averages []byte
	pages               []ftsPage
	terms               []ftsTerm
	sizes               []ftsPage // a row's id and its lengths
}

type ftsPage struct {
	id    int64
	block []byte
}

type ftsTerm struct {
	segment int64
	term    []byte // a blob: FTS5 compares terms as bytes
	page    int64
}

// buildPart indexes rows in an FTS5 table of the store's columns and tokenizer, without
// content, in a database in memory, and reads back what it wrote.
func buildPart(ctx context.Context, rows []ftsRow) (*ftsPart, error) {
	db, err := openDB(":memory:", false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // each connection to :memory: is a database of its own
	for _, q := range []string{
		`CREATE VIRTUAL TABLE p USING fts5(title, text, content='', ` + ftsTokenizer + `)`,
		`INSERT INTO p(p, rank) VALUES('hashsize', 33554432)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO p(rowid, title, text) VALUES (?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if _, err := ins.ExecContext(ctx, r.id, r.title, r.text); err != nil {
			ins.Close()
			return nil, err
		}
	}
	ins.Close()
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	p := &ftsPart{}
	if err := db.QueryRowContext(ctx, `SELECT (SELECT block FROM p_data WHERE id = ?), (SELECT block FROM p_data WHERE id = ?)`,
		ftsStructureRowid, ftsAveragesRowid).Scan(&p.structure, &p.averages); err != nil {
		return nil, err
	}
	pages, err := db.QueryContext(ctx, `SELECT id, block FROM p_data WHERE id NOT IN (?, ?) ORDER BY id`, ftsStructureRowid, ftsAveragesRowid)
	if err != nil {
		return nil, err
	}
	if p.pages, err = scanPages(pages); err != nil {
		return nil, err
	}
	sizes, err := db.QueryContext(ctx, `SELECT id, sz FROM p_docsize ORDER BY id`)
	if err != nil {
		return nil, err
	}
	if p.sizes, err = scanPages(sizes); err != nil {
		return nil, err
	}
	terms, err := db.QueryContext(ctx, `SELECT segid, term, pgno FROM p_idx`)
	if err != nil {
		return nil, err
	}
	defer terms.Close()
	for terms.Next() {
		var t ftsTerm
		if err := terms.Scan(&t.segment, &t.term, &t.page); err != nil {
			return nil, err
		}
		if t.term == nil {
			t.term = []byte{} // a segment's first page starts at the empty term, not at NULL
		}
		p.terms = append(p.terms, t)
	}
	return p, terms.Err()
}

func scanPages(rows *sql.Rows) ([]ftsPage, error) {
	defer rows.Close()
	var out []ftsPage
	for rows.Next() {
		var p ftsPage
		if err := rows.Scan(&p.id, &p.block); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// addPart adds part's segments to the store's table chunks_fts, in tx, whose connection has
// flushed its own terms. It reports false, having written nothing, when it cannot.
func addPart(ctx context.Context, tx *sql.Tx, part *ftsPart) (bool, error) {
	var structure, averages []byte
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT block FROM chunks_fts_data WHERE id = ?), (SELECT block FROM chunks_fts_data WHERE id = ?)`,
		ftsStructureRowid, ftsAveragesRowid).Scan(&structure, &averages); err != nil {
		return false, err
	}
	into, ok := decodeStructure(structure)
	if !ok {
		return false, nil
	}
	from, ok := decodeStructure(part.structure)
	if !ok || len(from.levels) == 0 {
		return false, nil
	}
	for i, l := range from.levels {
		if l.merge != 0 || i > 0 && len(l.segments) > 0 {
			return false, nil
		}
	}
	totals, ok := addAverages(averages, part.averages)
	if !ok {
		return false, nil
	}
	// The part's segments take the lowest ids the table does not use, as FTS5 gives them.
	used := map[uint64]bool{}
	count := 0
	for _, l := range into.levels {
		for _, s := range l.segments {
			used[s.id] = true
			count++
		}
	}
	if count+len(from.levels[0].segments) > ftsMaxSegments {
		return false, nil
	}
	renumber := map[int64]int64{}
	next := uint64(1)
	if len(into.levels) == 0 {
		into.levels = []ftsLevel{{}}
	}
	for _, s := range from.levels[0].segments {
		for used[next] {
			next++
		}
		if next > ftsMaxSegmentID {
			return false, nil
		}
		used[next] = true
		renumber[int64(s.id)] = int64(next)
		s.id = next
		into.levels[0].segments = append(into.levels[0].segments, s)
	}
	for _, pg := range part.pages {
		if _, ok := renumber[pg.id>>ftsSegmentShift]; !ok {
			return false, nil // a page of no segment: a record this code does not know
		}
	}
	into.writes += from.writes

	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks_fts_data(id, block) VALUES (?, ?)`)
	if err != nil {
		return false, err
	}
	defer ins.Close()
	for _, pg := range part.pages {
		seg := pg.id >> ftsSegmentShift
		id := pg.id - seg<<ftsSegmentShift + renumber[seg]<<ftsSegmentShift
		if _, err := ins.ExecContext(ctx, id, pg.block); err != nil {
			return false, fmt.Errorf("add a segment's page: %w", err)
		}
	}
	insTerm, err := tx.PrepareContext(ctx, `INSERT INTO chunks_fts_idx(segid, term, pgno) VALUES (?, ?, ?)`)
	if err != nil {
		return false, err
	}
	defer insTerm.Close()
	for _, t := range part.terms {
		seg, ok := renumber[t.segment]
		if !ok {
			return false, fmt.Errorf("add a segment's terms: segment %d is not in the part's structure", t.segment)
		}
		if _, err := insTerm.ExecContext(ctx, seg, t.term, t.page); err != nil {
			return false, fmt.Errorf("add a segment's terms: %w", err)
		}
	}
	insSize, err := tx.PrepareContext(ctx, `INSERT INTO chunks_fts_docsize(id, sz) VALUES (?, ?)`)
	if err != nil {
		return false, err
	}
	defer insSize.Close()
	for _, s := range part.sizes {
		if _, err := insSize.ExecContext(ctx, s.id, s.block); err != nil {
			return false, fmt.Errorf("add a row's lengths: %w", err)
		}
	}
	for id, block := range map[int64][]byte{ftsStructureRowid: into.encode(), ftsAveragesRowid: totals} {
		if _, err := tx.ExecContext(ctx, `UPDATE chunks_fts_data SET block = ? WHERE id = ?`, block, id); err != nil {
			return false, err
		}
	}
	return true, nil
}

// An ftsStructure is FTS5's structure record: its segments, level by level.
type ftsStructure struct {
	cookie [4]byte
	writes uint64
	levels []ftsLevel
}

type ftsLevel struct {
	merge    uint64 // how many of its first segments a merge in progress reads
	segments []ftsSegment
}

type ftsSegment struct{ id, first, last uint64 }

// decodeStructure reads a structure record of FTS5's first version; ok is false for any
// other.
func decodeStructure(b []byte) (s ftsStructure, ok bool) {
	if len(b) < 5 || b[4] == 0xff { // 0xff: the second version's mark
		return s, false
	}
	copy(s.cookie[:], b)
	b = b[4:]
	bad := false
	next := func() uint64 {
		v, n := getVarint(b)
		if n == 0 {
			bad = true
		}
		b = b[n:]
		return v
	}
	levels, segments := next(), next()
	s.writes = next()
	if bad || levels > ftsMaxSegments || segments > ftsMaxSegments {
		return s, false
	}
	for range levels {
		l := ftsLevel{merge: next()}
		n := next()
		if bad || n > segments {
			return s, false
		}
		for range n {
			l.segments = append(l.segments, ftsSegment{id: next(), first: next(), last: next()})
		}
		segments -= n
		s.levels = append(s.levels, l)
	}
	return s, !bad && segments == 0 && len(b) == 0
}

func (s ftsStructure) encode() []byte {
	out := append([]byte(nil), s.cookie[:]...)
	n := 0
	for _, l := range s.levels {
		n += len(l.segments)
	}
	out = putVarint(out, uint64(len(s.levels)))
	out = putVarint(out, uint64(n))
	out = putVarint(out, s.writes)
	for _, l := range s.levels {
		out = putVarint(out, l.merge)
		out = putVarint(out, uint64(len(l.segments)))
		for _, g := range l.segments {
			out = putVarint(putVarint(putVarint(out, g.id), g.first), g.last)
		}
	}
	return out
}

// addAverages adds two averages records: the rows, then each column's tokens (an empty
// record is a table with no rows).
func addAverages(a, b []byte) ([]byte, bool) {
	x, ok1 := varints(a)
	y, ok2 := varints(b)
	if !ok1 || !ok2 || len(x) > 0 && len(y) > 0 && len(x) != len(y) {
		return nil, false
	}
	if len(x) < len(y) {
		x, y = y, x
	}
	var out []byte
	for i, v := range x {
		if i < len(y) {
			v += y[i]
		}
		out = putVarint(out, v)
	}
	return out, true
}

func varints(b []byte) ([]uint64, bool) {
	var out []uint64
	for len(b) > 0 {
		v, n := getVarint(b)
		if n == 0 {
			return nil, false
		}
		out, b = append(out, v), b[n:]
	}
	return out, true
}

// getVarint reads one of SQLite's varints (big-endian, 7 bits a byte, a ninth byte of 8
// bits); n is 0 when b ends first.
func getVarint(b []byte) (v uint64, n int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

func putVarint(out []byte, v uint64) []byte {
	if v > 1<<56-1 {
		var buf [9]byte
		buf[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			buf[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return append(out, buf[:]...)
	}
	var buf [9]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte(v&0x7f) | 0x80
		v >>= 7
		if v == 0 {
			break
		}
	}
	buf[len(buf)-1] &= 0x7f
	return append(out, buf[n:]...)
}
