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

// listText lists a text query q, whose plain statement (reading the runs newest first) is
// query.
func (s *SQLite) listText(ctx context.Context, q Query, query string, args []any) (Page, error) {
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
		lo, hi := idRange(w)
		var n int
		err := s.r.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT 1 FROM halo_runs_text WHERE search GLOB ?1 LIMIT ?4))
  + (SELECT count(*) FROM (SELECT 1 FROM halo_runs WHERE id >= ?2 COLLATE NOCASE AND id < ?3 COLLATE NOCASE LIMIT ?4))`,
			globPattern(w), lo, hi, few).Scan(&n)
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
