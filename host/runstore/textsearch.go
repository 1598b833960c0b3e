package runstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"unicode/utf8"
)

// How the embedded store lists a text query, so that a rare word and a common one are both
// found in milliseconds over 100,000 runs:
//
//  1. A word with fewer than driveFew matches (in halo_runs_text, the trigram index of the
//     search text, and run ids it begins) drives: its matches are read from the indexes,
//     the other filters and words kept, and the few left sorted.
//  2. Otherwise the newest scanMost runs the other filters keep are read, newest first,
//     keeping those that match, as a query without words is: a common word fills its page
//     there.
//  3. When it does not, the word with the fewest matches drives after all.
//
// A word without 3 letters in a row other than * ? [ ] cannot be looked up in the trigram
// index: with no other word the query reads the runs newest first until its page is full.
const (
	driveFew = 300
	scanMost = 5000
)

// textPlan holds driveFew and scanMost, which tests make small; zero means those.
type textPlan struct{ few, most int }

func (p textPlan) values() (few, most int) {
	if p.few <= 0 || p.most <= 0 {
		return driveFew, scanMost
	}
	return p.few, p.most
}

// indexText writes the rows past halo_text_state.upto (by rowid) into halo_runs_text, and
// their ids into halo_run_ids, at most most of them (0: all), in one transaction of the
// writer, and reports whether any are left. A text query indexes them all first (List), and
// the commit goroutine too while nothing waits for a commit (commits.idleIndex), both
// idleChunk rows a transaction, so that the saves write neither index (schema steps 8 and
// 9). In one statement, FTS5 gathers the terms of all the rows before it writes a segment:
// indexed so, a run costs less than a commit's statements cost it (docs/cli.md, "Run
// records").
func (s *SQLite) indexText(ctx context.Context, most int) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, s.dbErr("text index", err)
	}
	defer tx.Rollback()
	var upto, top int64
	if err := tx.QueryRowContext(ctx, `SELECT upto, coalesce((SELECT max(rowid) FROM halo_runs), 0) FROM halo_text_state`).Scan(&upto, &top); err != nil {
		return false, s.dbErr("text index", err)
	}
	if top <= upto {
		return false, nil
	}
	end := top
	if most > 0 {
		err := tx.QueryRowContext(ctx, `SELECT rowid FROM halo_runs WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?`, upto, most-1).Scan(&end)
		if errors.Is(err, sql.ErrNoRows) {
			end = top
		} else if err != nil {
			return false, s.dbErr("text index", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO halo_runs_text (rowid, search) SELECT rowid, search FROM halo_runs WHERE rowid > ?1 AND rowid <= ?2 ORDER BY rowid`, upto, end); err != nil {
		return false, s.dbErr("text index", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO halo_run_ids (lid, run) SELECT substr(lower(id), 1, `+itoa(idPrefixLen)+`), rowid FROM halo_runs WHERE rowid > ?1 AND rowid <= ?2`, upto, end); err != nil {
		return false, s.dbErr("text index", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE halo_text_state SET upto = ?`, end); err != nil {
		return false, s.dbErr("text index", err)
	}
	if err := tx.Commit(); err != nil {
		return false, s.dbErr("text index", err)
	}
	return end < top, nil
}

// textIndexBehind reports, from a reader, whether rows are past halo_text_state.upto, so that a
// text query of an index that is up to date does not wait for the writer.
func (s *SQLite) textIndexBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := s.r.QueryRowContext(ctx, `SELECT coalesce((SELECT max(rowid) FROM halo_runs), 0) > upto FROM halo_text_state`).Scan(&behind)
	if err != nil {
		return false, s.dbErr("text index", err)
	}
	return behind, nil
}

// textIndexUpToDate writes the rows the text index and halo_run_ids do not hold yet, a chunk
// a transaction so that a commit waits for one at most, before a query reads them (a text
// query, a run id's beginning).
func (s *SQLite) textIndexUpToDate(ctx context.Context) error {
	behind, err := s.textIndexBehind(ctx)
	for left := behind; err == nil && left; {
		left, err = s.indexText(ctx, idleChunk)
	}
	return err
}

// listText lists a text query q, whose plain statement (reading the runs newest first) is
// query.
func (s *SQLite) listText(ctx context.Context, q Query, query string, args []any) (Page, error) {
	if err := s.textIndexUpToDate(ctx); err != nil {
		return Page{}, err
	}
	few, most := s.text.values()
	drive, fewest, err := s.textDriver(ctx, q.Words(), few)
	if err != nil {
		return Page{}, err
	}
	if drive >= 0 && fewest >= few {
		fq, fargs, _ := SQLiteDialect.listSQL(q, nanos, listPlan{drive: -1, floorOf: most})
		var floor int64
		err := s.r.QueryRowContext(ctx, fq, fargs...).Scan(&floor)
		switch {
		case errors.Is(err, sql.ErrNoRows): // fewer runs than scanMost: read them all
			drive = -1
		case err != nil:
			return Page{}, s.dbErr("list runs", err)
		default:
			bq, bargs, _ := SQLiteDialect.listSQL(q, nanos, listPlan{drive: -1, floor: floor})
			runs, err := s.listRows(ctx, bq, bargs)
			if err != nil {
				return Page{}, err
			}
			if len(runs) > LimitOf(q) {
				return PageOf(q, runs), nil
			}
		}
	}
	if drive >= 0 {
		query, args, _ = SQLiteDialect.listSQL(q, nanos, listPlan{drive: drive})
	}
	runs, err := s.listRows(ctx, query, args)
	if err != nil {
		return Page{}, err
	}
	return PageOf(q, runs), nil
}

// indexable reports whether the trigram index can look w up: it has 3 letters in a row
// that are not GLOB's wildcards (which its pattern escapes with [ and ]).
func indexable(w string) bool {
	for _, part := range strings.FieldsFunc(w, func(r rune) bool { return strings.ContainsRune("*?[]", r) }) {
		if utf8.RuneCountInString(part) >= 3 {
			return true
		}
	}
	return false
}

// textDriver returns the word of words (lowercased) with the fewest matches (counted up to
// few) and how many, or -1 when every word is shorter than 3 letters.
func (s *SQLite) textDriver(ctx context.Context, words []string, few int) (int, int, error) {
	best, fewest := -1, 0
	for i, w := range words {
		if !indexable(w) {
			continue
		}
		var args []any
		arg := func(v any) string { args = append(args, v); return SQLiteDialect.Param(len(args)) }
		text := "SELECT (SELECT count(*) FROM (SELECT 1 FROM halo_runs_text WHERE search GLOB " + arg(globPattern(w)) + " LIMIT " + arg(few) + "))"
		text += " + (SELECT count(*) FROM (" + SQLiteDialect.idBegins(w, arg) + " LIMIT " + arg(few) + "))"
		var n int
		err := s.r.QueryRowContext(ctx, text, args...).Scan(&n)
		if err != nil {
			return -1, 0, s.dbErr("list runs", err)
		}
		if best < 0 || n < fewest {
			best, fewest = i, n
		}
		if fewest < few {
			break // few enough
		}
	}
	return best, fewest, nil
}
