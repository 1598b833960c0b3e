package runstore

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/jsonappend"
)

// Columns are what halo_runs keeps of a run beside its record, for lists, filters and
// conditions: both stores write them the same way.
type Columns struct {
	ID, File, Pipeline, Status, Waiting, ErrCode, ErrMsg string
	Started, Updated                                     time.Time
	Cost                                                 float64
	Violations                                           int
	// TokensIn and TokensOut are the tokens the run's model calls read and wrote;
	// Unpriced says one of them had no price, so Cost is less than the run cost.
	TokensIn, TokensOut int64
	Unpriced            bool
	// Search is SearchText of the record.
	Search string
}

// ColumnsOf returns rec's columns.
func ColumnsOf(rec *runtime.Record) Columns {
	c := Columns{ID: rec.RunID, File: rec.File, Pipeline: rec.Pipeline, Status: string(rec.Status), Started: rec.Started, Updated: rec.Updated,
		Cost: rec.Meta.Cost, Violations: len(rec.Meta.Violations), Search: SearchText(rec)}
	if rec.Meta.Paused != nil && rec.Status == runtime.Paused {
		c.Waiting = rec.Meta.Paused.WaitingFor
	}
	if rec.Error != nil {
		c.ErrCode, c.ErrMsg = rec.Error.Code, rec.Error.Message
	}
	c.TokensIn, c.TokensOut, c.Unpriced = usageOf(rec.Meta.Calls)
	return c
}

// usageOf sums the tokens of calls and says whether one had no price.
func usageOf(calls []runtime.CallInfo) (in, out int64, unpriced bool) {
	for _, ci := range calls {
		if ci.Usage != nil {
			in += int64(ci.Usage.InputTokens)
			out += int64(ci.Usage.OutputTokens)
		}
		unpriced = unpriced || ci.Unpriced
	}
	return in, out, unpriced
}

// Summary returns the list row the columns make.
func (c *Columns) Summary() Summary {
	s := Summary{RunID: c.ID, Pipeline: c.Pipeline, Status: runtime.Status(c.Status), Started: c.Started.UTC(), Updated: c.Updated.UTC(),
		Waiting: c.Waiting, Cost: c.Cost, Violations: c.Violations, File: c.File, TokensIn: c.TokensIn, TokensOut: c.TokensOut, Unpriced: c.Unpriced}
	if c.ErrCode != "" || c.ErrMsg != "" {
		s.Error = &runtime.ErrorInfo{Code: c.ErrCode, Message: c.ErrMsg}
	}
	return s
}

// maxSearch is the most bytes of a run's search text: its inputs and output beyond that are
// not searched.
const maxSearch = 8 << 10

// SearchText is what a text query (Query.Text) looks in, lowercased: the run's file and
// pipeline, its inputs and output as JSON, its error, and the targets of its model and tool
// calls ("Pay.create_refund"), at most 8 KiB of it.
func SearchText(rec *runtime.Record) string {
	b := make([]byte, 0, 256)
	b = append(b, rec.File...)
	b = append(b, ' ')
	b = append(b, rec.Pipeline...)
	for _, c := range rec.Meta.Calls {
		b = append(b, ' ')
		b = append(b, c.Target...)
	}
	if rec.Error != nil {
		b = append(b, ' ')
		b = append(b, rec.Error.Code...)
		b = append(b, ' ')
		b = append(b, rec.Error.Message...)
	}
	b = append(b, ' ')
	if out, ok := jsonappend.Object(b, rec.Inputs); ok {
		b = out
	}
	if rec.Output != nil && len(b) < maxSearch {
		b = append(b, ' ')
		if out, ok := jsonappend.Value(b, rec.Output); ok {
			b = out
		}
	}
	if len(b) > maxSearch {
		n := maxSearch
		for n > 0 && !utf8.RuneStart(b[n]) { // not in the middle of a letter
			n--
		}
		b = b[:n]
	}
	return strings.ToLower(string(b))
}

// A Query selects runs for List. Every filter set must hold.
type Query struct {
	// Status and Pipeline, when set, keep only runs with that status or pipeline.
	Status   runtime.Status
	Pipeline string
	// Since and Until, when set, keep the runs started at Since or later, and before Until.
	Since, Until time.Time
	// Violations keeps only runs with at least one policy violation.
	Violations bool
	// MinCost, when above 0, keeps only runs whose cost is more than it (dollars).
	MinCost float64
	// Text keeps the runs where every word of it is in the search text (SearchText: file,
	// pipeline, call targets, error, inputs and output), ignoring case, or begins the run's id.
	Text string
	// Limit is the most runs one page holds; 0 means 50. Stores cap it at 500.
	Limit int
	// Cursor is the Next of the page before; "" is the first page.
	Cursor string
}

// MaxLimit is the most runs one page holds.
const MaxLimit = 500

// maxWords is the most words a text query may have.
const maxWords = 16

// Words returns the words of q.Text, lowercased.
func (q Query) Words() []string {
	return strings.Fields(strings.ToLower(q.Text))
}

// SummaryColumns are the columns a list reads, in the order Columns.scan-ers read them.
const SummaryColumns = `id, file, pipeline, status, waiting_for, error_code, error_message, started, updated, cost, violations, tokens_in, tokens_out, unpriced`

// ListSQL returns the statement and arguments of one page of q, newest first by start time
// then id, one more row than the page holds (so the store knows there is a next page); time
// turns a time into d's argument. Both stores list with it, so they filter alike.
func (d Dialect) ListSQL(q Query, time func(time.Time) any) (string, []any, error) {
	return d.listSQL(q, time, listPlan{drive: -1})
}

// A listPlan says how the embedded store reads a text query (see SQLite.List); the same
// runs match whichever it takes.
type listPlan struct {
	// drive, when 0 or more, is the word of q.Text whose matches are read from the text
	// index (halo_runs_text) and the index of run ids, rather than reading the runs newest
	// first and keeping those that match.
	drive int
	// floor, when set, keeps the runs started at it or later: the newest few thousand,
	// among which a common word's page is found, or not.
	floor any
	// floorOf, when above 0, makes the statement that finds the floor instead: the start
	// of the floorOf-th newest run the filters but the words keep.
	floorOf int
}

func (d Dialect) listSQL(q Query, time func(time.Time) any, plan listPlan) (string, []any, error) {
	drive := plan.drive
	cur, err := DecodeCursor(q.Cursor)
	if err != nil {
		return "", nil, err
	}
	words := q.Words()
	if len(words) > maxWords {
		return "", nil, Errorf(CodeQuery, "a text query of %d words: at most %d", len(words), maxWords)
	}
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return d.Param(len(args)) }
	with, from := "", "halo_runs"
	if drive >= 0 {
		w := words[drive]
		with = "WITH hits(r) AS MATERIALIZED (SELECT rowid FROM halo_runs_text WHERE search GLOB " + arg(globPattern(w)) +
			" UNION " + d.idBegins(w, arg) + ") "
		from = "hits CROSS JOIN halo_runs ON halo_runs.rowid = hits.r"
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(string(q.Status)))
		if q.Status != runtime.Completed {
			where = append(where, UnfinishedRuns) // so that halo_runs_status is read
		}
	}
	if q.Pipeline != "" {
		where = append(where, "pipeline = "+arg(q.Pipeline))
	}
	if !q.Since.IsZero() {
		where = append(where, "started >= "+arg(time(q.Since)))
	}
	if !q.Until.IsZero() {
		where = append(where, "started < "+arg(time(q.Until)))
	}
	if q.Violations {
		where = append(where, "violations > 0")
	}
	if q.MinCost > 0 {
		where = append(where, "cost > "+arg(q.MinCost))
	}
	if plan.floor != nil {
		where = append(where, "started >= "+arg(plan.floor))
	}
	for i, w := range words {
		if i == drive || plan.floorOf > 0 {
			continue
		}
		esc := likeEscape(w)
		// A run id's beginning ignores case, as the words are lowercase: SQLite's LIKE
		// ignores ASCII case; PostgreSQL's does not, so it compares the lowercased id.
		id := "id"
		if d.Name == "postgres" {
			id = "lower(id)"
		}
		where = append(where, "(search LIKE "+arg("%"+esc+"%")+` ESCAPE '\' OR `+id+` LIKE `+arg(esc+"%")+` ESCAPE '\')`)
	}
	if cur.RunID != "" {
		// Written out rather than as a row comparison, which SQLite's planner does not take
		// to the index.
		s, id := arg(time(cur.Started)), arg(cur.RunID)
		where = append(where, fmt.Sprintf("(started < %s OR (started = %s AND id < %s))", s, s, id))
	}
	cols := SummaryColumns
	if plan.floorOf > 0 {
		cols = "started"
	}
	sql := with + "SELECT " + cols + " FROM " + from
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	if plan.floorOf > 0 {
		return sql + " ORDER BY started DESC, id DESC LIMIT 1 OFFSET " + arg(plan.floorOf-1), args, nil
	}
	sql += " ORDER BY started DESC, id DESC LIMIT " + arg(LimitOf(q)+1)
	return sql, args, nil
}

// globPattern is the GLOB pattern of the texts that hold w (lowercased, as the search text
// is: GLOB, unlike LIKE, tells cases apart, and FTS5's trigram index serves it with
// wildcards escaped, which it does not for LIKE ... ESCAPE).
func globPattern(w string) string {
	return "*" + strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`).Replace(w) + "*"
}

// idBegins is the embedded store's statement that selects the rowids of the runs whose id
// begins with w (lowercase) ignoring ASCII case, from halo_run_ids, the index of the ids'
// first idPrefixLen letters lowercased that is written behind the saves with the text index
// (schema steps 9 and 14), and that a text query brings up to date first (SQLite.listText):
// a range of it for a word no longer than that, else the entries of the word's first
// idPrefixLen letters whose runs' ids begin with the whole word. Ids are ASCII, below \x7f.
func (d Dialect) idBegins(w string, arg func(any) string) string {
	if len(w) <= idPrefixLen {
		return "SELECT run FROM halo_run_ids WHERE lid >= " + arg(w) + " AND lid < " + arg(w+"\x7f")
	}
	return "SELECT run FROM halo_run_ids CROSS JOIN halo_runs ON halo_runs.rowid = run WHERE lid = " + arg(w[:idPrefixLen]) +
		" AND lower(halo_runs.id) GLOB " + arg(strings.TrimPrefix(globPattern(w), "*"))
}

// likeEscape escapes LIKE's wildcards in w.
func likeEscape(w string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(w)
}

// PageOf makes the page of rows, read with one row more than the page holds.
func PageOf(q Query, rows []Summary) Page {
	n := LimitOf(q)
	p := Page{Runs: rows}
	if len(rows) > n {
		p.Runs = rows[:n]
		last := p.Runs[n-1]
		p.Next = Cursor{Started: last.Started, RunID: last.RunID}.Encode()
	}
	if p.Runs == nil {
		p.Runs = []Summary{}
	}
	return p
}

// CodeQuery: a list query the store cannot answer (too many words).
const CodeQuery = "BAD_QUERY"

// A Prune says which runs Prune removes: finished ones (completed or failed; never a paused
// or running run) that started before Before (zero: any), except the newest Keep of them.
type Prune struct {
	Before time.Time
	Keep   int
}

// PruneSQL returns the statement and arguments that select the ids Prune p removes: of the
// finished runs, all but the newest p.Keep, and of those the ones started before p.Before.
func PruneSQL(d Dialect, p Prune, time func(time.Time) any) (string, []any) {
	var args []any
	arg := func(v any) string { args = append(args, v); return d.Param(len(args)) }
	offset := "OFFSET " + arg(max(p.Keep, 0))
	if d.Name == "sqlite" {
		offset = "LIMIT -1 " + offset
	}
	sql := "SELECT id, started FROM halo_runs WHERE status IN ('completed', 'failed') ORDER BY started DESC, id DESC " + offset
	if p.Before.IsZero() {
		return "SELECT id FROM (" + sql + ") AS finished", args
	}
	return "SELECT id FROM (" + sql + ") AS finished WHERE started < " + arg(time(p.Before)), args
}
