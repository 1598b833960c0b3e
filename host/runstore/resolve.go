package runstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"halolang.dev/halo/host/runtime"
)

// maxNamed is how many of the runs an ambiguous beginning matches ResolveID names.
const maxNamed = 5

// ResolveID returns the whole id of the run that word names: "last" is the run saved most
// recently (Newest), a whole id is itself, and otherwise word is the beginning of exactly one
// run's id, ignoring case, as docker takes a container's. A beginning that no run's id has is
// a CodeRun error wrapping ErrNotFound, as Load's unknown id is; one that several have is a
// CodeRun error naming some of them, so that nothing is done to a run the user did not mean.
func (s *SQLite) ResolveID(ctx context.Context, word string) (string, error) {
	if word == "last" {
		return s.Newest()
	}
	if !ValidID(word) {
		return "", Errorf(runtime.CodeRun, "%q is not a run id", truncate(word, 130))
	}
	if err := s.Sync(); err != nil {
		return "", err
	}
	var one int
	err := s.r.QueryRowContext(ctx, `SELECT 1 FROM halo_runs WHERE key = ? AND id = ?`, s.keys.of(word), word).Scan(&one)
	if err == nil {
		return word, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", s.dbErr("find run "+word, err)
	}
	// The index of the ids' beginnings is written behind the saves (textsearch.go).
	if err := s.textIndexUpToDate(ctx); err != nil {
		return "", err
	}
	var args []any
	arg := func(v any) string { args = append(args, v); return SQLiteDialect.Param(len(args)) }
	q := `SELECT id FROM halo_runs WHERE rowid IN (` + SQLiteDialect.idBegins(strings.ToLower(word), arg) + `) ORDER BY id LIMIT ` + itoa(maxNamed+1)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return "", s.dbErr("find run "+word, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", s.dbErr("find run "+word, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", s.dbErr("find run "+word, err)
	}
	switch len(ids) {
	case 0:
		return "", &Error{Code: runtime.CodeRun, Message: fmt.Sprintf("no run %s in %s", word, s.dir), Err: ErrNotFound}
	case 1:
		return ids[0], nil
	}
	more := ""
	if len(ids) > maxNamed {
		ids, more = ids[:maxNamed], " and more"
	}
	return "", Errorf(runtime.CodeRun, "%s begins the ids of several runs (%s%s): give more of the id", word, strings.Join(ids, ", "), more)
}
