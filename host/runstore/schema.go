package runstore

import "strings"

// A Dialect is the SQL one store speaks: what the shared schema and queries write
// differently for SQLite and for PostgreSQL.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// Time, Bytes, Serial and Now replace {time}, {bytes}, {serial} and {now} in the schema.
	Time, Bytes, Serial, Now string
	// Usage replaces {usage}: the statement that fills tokens_in, tokens_out and unpriced
	// of the rows there are from their records (schema step 4).
	Usage string
	// TextIndex replaces {text_index}: the indexes a text query uses (schema step 5).
	TextIndex string
	// TextMerge replaces {text_merge}: how the text index keeps few segments (schema step 6).
	TextMerge string
	// IDCase replaces {id_case}: the index that finds a run id's beginning ignoring case
	// (schema step 7).
	IDCase string
	// Lean replaces {lean}: what the embedded store's saves no longer write (schema step 8).
	Lean string
	// Keyed replaces {keyed}: the embedded store finds rows by key, not by an index of the
	// ids (schema step 9; SQLite.beforeKeyed works out the keys).
	Keyed string
	// TextLean replaces {text_lean}: the embedded store's text index keeps which runs hold
	// a word, not where in them (schema step 10).
	TextLean string
	// TextFewerMerges replaces {text_fewer_merges}: the embedded store's text index merges
	// its segments less often (schema step 12).
	TextFewerMerges string
	// ShortIDs replaces {short_ids}: the embedded store's index of the run ids' beginnings
	// keeps their first idPrefixLen letters (schema step 14).
	ShortIDs string
}

// The two dialects. SQLite keeps times as integer nanoseconds since 1970 (UTC), so that keyset
// cursors compare exactly; PostgreSQL as timestamptz.
var (
	SQLiteDialect   = Dialect{Name: "sqlite", Time: "integer", Bytes: "blob", Serial: "integer PRIMARY KEY", Now: "(CAST(unixepoch('subsec') * 1000000000 AS integer))", Usage: sqliteUsage, TextIndex: sqliteTextIndex, TextMerge: sqliteTextMerge, Lean: sqliteLean, Keyed: sqliteKeyed, TextLean: sqliteTextLean, TextFewerMerges: sqliteTextFewerMerges, ShortIDs: sqliteShortIDs}
	PostgresDialect = Dialect{Name: "postgres", Time: "timestamptz", Bytes: "bytea", Serial: "bigserial PRIMARY KEY", Now: "now()", Usage: postgresUsage, TextIndex: postgresTextIndex, IDCase: postgresIDCase}
)

// sqliteUsage and postgresUsage sum what ColumnsOf sums, from each record's meta.calls: the
// usage of its model calls, and whether one had no price. A record that is not JSON counts
// none. PostgreSQL's json functions refuse the \u0000 escape, which the sums do not need:
// it is read as another.
const (
	sqliteUsage = `UPDATE halo_runs SET
  tokens_in = coalesce((SELECT sum(json_extract(c.value, '$.usage.inputTokens')) FROM json_each(record, '$.meta.calls') AS c), 0),
  tokens_out = coalesce((SELECT sum(json_extract(c.value, '$.usage.outputTokens')) FROM json_each(record, '$.meta.calls') AS c), 0),
  unpriced = EXISTS (SELECT 1 FROM json_each(record, '$.meta.calls') AS c WHERE json_extract(c.value, '$.unpriced') = 1)
WHERE json_valid(record) AND json_type(record, '$.meta.calls') = 'array'`
	postgresUsage = `UPDATE halo_runs AS r SET tokens_in = u.tin, tokens_out = u.tout, unpriced = u.unp FROM (
  SELECT h.id, coalesce(sum((c->'usage'->>'inputTokens')::bigint), 0) AS tin, coalesce(sum((c->'usage'->>'outputTokens')::bigint), 0) AS tout,
    coalesce(bool_or(c->>'unpriced' = 'true'), false) AS unp
  FROM halo_runs AS h CROSS JOIN LATERAL json_array_elements(replace(h.record, '\u0000', '\ufffd')::json->'meta'->'calls') AS c
  WHERE json_typeof(replace(h.record, '\u0000', '\ufffd')::json->'meta'->'calls') = 'array'
  GROUP BY h.id) AS u
WHERE r.id = u.id`
)

// Param is the n-th (from 1) query parameter: ?n for SQLite, $n for PostgreSQL.
func (d Dialect) Param(n int) string {
	if d.Name == "sqlite" {
		return "?" + itoa(n)
	}
	return "$" + itoa(n)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// migrations are the run stores' one schema, a step a version, written once for both
// dialects ({time}, {bytes}, {serial}, {now} differ). Never change what a step does once it
// has shipped; add one. Records and events are JSON text: PostgreSQL's jsonb refuses the
// \u0000 escape a model's answer may hold. From step 13 the embedded store packs the
// records it writes (recordpack.go): a later step that reads halo_runs.record in SQL
// (json_extract, as step 4 does) finds JSON only in the rows written before it.
var migrations = []string{
	`CREATE TABLE halo_runs (
  id text PRIMARY KEY,
  pipeline text NOT NULL,
  status text NOT NULL,
  waiting_for text NOT NULL DEFAULT '',
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  started {time} NOT NULL,
  updated {time} NOT NULL,
  record text NOT NULL,
  owner text,
  lease_until {time},
  cancel_requested boolean NOT NULL DEFAULT false
);
CREATE INDEX halo_runs_newest ON halo_runs (started DESC, id DESC);
CREATE INDEX halo_runs_running ON halo_runs (lease_until) WHERE status = 'running';
CREATE INDEX halo_runs_owner ON halo_runs (owner) WHERE owner IS NOT NULL;
CREATE TABLE halo_events (
  run_id text NOT NULL,
  seq integer NOT NULL,
  event text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE TABLE halo_signals (
  id {serial},
  run_id text NOT NULL,
  channel text NOT NULL,
  payload text NOT NULL,
  via text NOT NULL,
  owner text NOT NULL,
  at {time} NOT NULL DEFAULT {now}
);
CREATE TABLE halo_links (
  id text PRIMARY KEY,
  run_id text NOT NULL,
  used {time} NOT NULL DEFAULT {now}
);
CREATE TABLE halo_secrets (
  name text PRIMARY KEY,
  value {bytes} NOT NULL
);`,
	// 2: what a list shows of each run beside its status (Studio, GET /api/runs).
	`ALTER TABLE halo_runs ADD COLUMN cost double precision NOT NULL DEFAULT 0;
ALTER TABLE halo_runs ADD COLUMN violations integer NOT NULL DEFAULT 0;`,
	// 3: what halo runs and Studio filter and search on: the file a run came from, the text
	// a search looks in (see SearchText), and indexes for the newest runs of one status or
	// pipeline, and of those with violations.
	`ALTER TABLE halo_runs ADD COLUMN file text NOT NULL DEFAULT '';
ALTER TABLE halo_runs ADD COLUMN search text NOT NULL DEFAULT '';
CREATE INDEX halo_runs_status ON halo_runs (status, started DESC, id DESC);
CREATE INDEX halo_runs_pipeline ON halo_runs (pipeline, started DESC, id DESC);
CREATE INDEX halo_runs_violations ON halo_runs (started DESC, id DESC) WHERE violations > 0;
UPDATE halo_runs SET search = lower(substr(record, 1, 8192));`,
	// 4: the tokens a run's model calls read and wrote, and whether one of them had no
	// price (its cost is then unknown, not 0), for lists; the runs there are get theirs
	// from their records.
	`ALTER TABLE halo_runs ADD COLUMN tokens_in bigint NOT NULL DEFAULT 0;
ALTER TABLE halo_runs ADD COLUMN tokens_out bigint NOT NULL DEFAULT 0;
ALTER TABLE halo_runs ADD COLUMN unpriced boolean NOT NULL DEFAULT false;
{usage}`,
	// 5: the indexes a text query (Query.Text) uses: of the search text, and of the run
	// ids' beginnings.
	`{text_index}`,
	// 6: how the text index keeps few segments (sqliteTextMerge; nothing in PostgreSQL).
	`{text_merge}`,
	// 7: a run id's beginning is found ignoring case in PostgreSQL too (postgresIDCase;
	// SQLite's index of the ids ignored case from step 5 to step 8).
	`{id_case}`,
	// 8: the embedded store's saves write less: the text index is written behind them, and
	// the ids have one index (sqliteLean; nothing in PostgreSQL).
	`{lean}`,
	// 9: the embedded store finds a run's row by its key and id, not by an index of the ids
	// (sqliteKeyed, runkey.go; nothing in PostgreSQL).
	`{keyed}`,
	// 10: the embedded store's text index holds less, and is written again behind the
	// saves (sqliteTextLean; nothing in PostgreSQL).
	`{text_lean}`,
	// 11: the indexes that list the newest runs are ordered oldest first, and the one of
	// each status's newest runs leaves out the completed ones (newestLast and
	// UnfinishedRuns say why).
	newestLast,
	// 12: the embedded store's text index merges its segments less often
	// (sqliteTextFewerMerges; nothing in PostgreSQL).
	`{text_fewer_merges}`,
	// 13: the embedded store's new records are packed (recordpack.go), which a halo of an
	// earlier step cannot read: it refuses the store as newer than it knows instead. No
	// statement: rows written before stay JSON, and are read as they are.
	``,
	// 14: the embedded store's index of the run ids' beginnings keeps their first
	// idPrefixLen letters (sqliteShortIDs; nothing in PostgreSQL).
	`{short_ids}`,
}

// idPrefixLen is how many letters of a run id, lowercased, halo_run_ids keeps (schema step
// 14): a word that begins an id is looked up by its first idPrefixLen letters, and the
// rows found are tested against the whole word (Dialect.idBegins). Step 14 wrote it into the
// store (its trigger, its entries): it changes only with a step of its own.
const idPrefixLen = 8

// sqliteShortIDs makes halo_run_ids keep the first idPrefixLen letters of each id rather
// than all of them (16 or 32 for the ids halo makes). The ids look random, so each entry
// written behind the saves goes to a page of the index of its own once the index is larger
// than what a commit holds, and the commit writes every page it dirtied: the index's size,
// not the runs', says how many pages that is. The entries already there are written again,
// shortened, in the order of their ids; the trigger that removes a run's entry looks it up
// by its shortened id. BenchmarkTextIndex, three rounds each alternated with step 13's
// store (7 December): 4.7–5.1 µs a run behind 20,000 runs against 5.0–6.1, 8.3–9.4 behind
// 200,000 (-textindex-runs) against 10.3–10.9; BenchmarkList's id-prefix as before.
const sqliteShortIDs = `DELETE FROM halo_run_ids;
INSERT INTO halo_run_ids (lid, run) SELECT substr(lower(id), 1, 8), rowid FROM halo_runs WHERE rowid <= (SELECT upto FROM halo_text_state) ORDER BY 1, 2;
DROP TRIGGER halo_runs_text_delete;
CREATE TRIGGER halo_runs_text_delete AFTER DELETE ON halo_runs BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) SELECT 'delete', old.rowid, old.search WHERE old.rowid <= (SELECT upto FROM halo_text_state); DELETE FROM halo_run_ids WHERE lid = substr(lower(old.id), 1, 8) AND run = old.rowid; UPDATE halo_text_state SET upto = min(upto, coalesce((SELECT max(rowid) FROM halo_runs), 0)); END`

// sqliteTextFewerMerges makes FTS5 merge halo_runs_text's segments 8 at a time rather than 4
// (automerge), and at once only when a level has 16 (crisismerge, FTS5's default; step 6 made
// it 4 when each commit wrote the index). Since the index is written behind the saves, 5,000
// runs a transaction (commit.go's idleChunk), it has few segments, and merging them 4 at a
// time was 15% of what indexing a run cost (callgrind). BenchmarkTextIndex, three runs each,
// alternated on the 2-core development machine: 6.4, 6.9 and 7.2 µs of processor time a run
// where step 11's store took 7.7, 8.1 and 10.2; BenchmarkList over 100,000 runs took about
// as long as before (a common word 2.0 ms against 1.7, a rare one 2.2 against 2.0, a run
// id's beginning 0.29 against 0.47). Merging none (automerge 0, crisismerge 64) cost about
// as little a run but made text queries two to four times slower.
const sqliteTextFewerMerges = `INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('automerge', 8);
INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('crisismerge', 16)`

// newestLast is schema step 11's indexes of the newest runs, of all of them, of each
// status's, of each pipeline's, in ascending order: a list reads them from the end, as it
// read the descending ones from the start, and a new run's entry goes at the end of the
// index (of its status's or pipeline's part of it), where B-trees add entries without
// moving others between pages (SQLite's quick balance); at the start of a descending one,
// each page that filled up spread its entries over its neighbours. BenchmarkCommitLayout
// (commits of 100 saves of scripts/bench-mcp.sh's completed record, callgrind, GOMAXPROCS=1,
// 10,000 rows): 107,400 to 110,900 instructions a row, where the descending indexes made
// 124,000 to 128,000 with the index of each status's runs leaving the completed ones out,
// and 141,600 to 147,100 with it holding them all.
const newestLast = `DROP INDEX halo_runs_newest;
CREATE INDEX halo_runs_newest ON halo_runs (started, id);
DROP INDEX halo_runs_status;
CREATE INDEX halo_runs_status ON halo_runs (status, started, id) WHERE ` + UnfinishedRuns + `;
DROP INDEX halo_runs_pipeline;
CREATE INDEX halo_runs_pipeline ON halo_runs (pipeline, started, id)`

// UnfinishedRuns is the condition of halo_runs_status, the index of each status's newest
// runs (schema step 11): every run but the completed ones, which are most of a store, and
// whose newest the index of all the newest runs finds as fast by itself: a completed run
// then writes three index entries rather than four (newestLast has what that saved). The
// planners of SQLite and PostgreSQL use the index only for a query that writes this
// condition itself (status = $1 does not say it, whatever $1 is): the statements of a
// status other than completed add it.
const UnfinishedRuns = "status <> 'completed'"

// postgresIDCase indexes the lowercased ids for lower(id) LIKE 'word%' (the words of a
// text query are lowercase), in place of step 5's index of the ids as they are.
const postgresIDCase = `DROP INDEX IF EXISTS halo_runs_id_pattern;
CREATE INDEX halo_runs_id_lower ON halo_runs (lower(id) text_pattern_ops)`

// sqliteTextIndex is the embedded store's text index: halo_runs_text, an FTS5 index of
// halo_runs.search with the trigram tokenizer (every 3 letters of the text, so that a word
// is found anywhere in it, as LIKE '%word%' finds it), kept in step with halo_runs by
// triggers; and an index of the run ids ignoring case, for a word that begins one. The
// index refers to halo_runs by rowid, which VACUUM may renumber: halo never runs it, and
// after one by hand, INSERT INTO halo_runs_text (halo_runs_text) VALUES ('rebuild') makes
// the index again (and since step 8, UPDATE halo_text_state SET upto = (SELECT max(rowid)
// FROM halo_runs) says so). postgresTextIndex indexes the ids for LIKE 'word%'; the index of the
// search text needs the pg_trgm extension, which host/runstore/postgres makes when it may.
const (
	sqliteTextIndex = `CREATE VIRTUAL TABLE halo_runs_text USING fts5(search, content='halo_runs', content_rowid='rowid', tokenize='trigram');
INSERT INTO halo_runs_text (halo_runs_text) VALUES ('rebuild');
CREATE TRIGGER halo_runs_text_insert AFTER INSERT ON halo_runs BEGIN INSERT INTO halo_runs_text (rowid, search) VALUES (new.rowid, new.search); END;
CREATE TRIGGER halo_runs_text_delete AFTER DELETE ON halo_runs BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) VALUES ('delete', old.rowid, old.search); END;
CREATE TRIGGER halo_runs_text_update AFTER UPDATE OF search ON halo_runs WHEN old.search IS NOT new.search BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) VALUES ('delete', old.rowid, old.search); INSERT INTO halo_runs_text (rowid, search) VALUES (new.rowid, new.search); END;
CREATE INDEX halo_runs_id_nocase ON halo_runs (id COLLATE NOCASE)`
	postgresTextIndex = `CREATE INDEX halo_runs_id_pattern ON halo_runs (id text_pattern_ops)`
)

// sqliteTextMerge makes FTS5 merge a level of halo_runs_text's segments once it has 4 (its
// crisismerge; 16 by default). A commit adds a segment or a few (commit.go), and a word is
// looked up in every segment: over 100,000 runs saved at once, FTS5's default left 11 to 13
// segments and a word one run holds took 1.0 to 1.2 ms to list (BenchmarkList text-rare);
// with 4, 6 segments and 0.8 ms, for about 10 µs more processor time a save
// (BenchmarkSave). Kept in the index's own configuration, which every halo that opens the
// store then uses. Step 12 (sqliteTextFewerMerges) set it back once the saves no longer
// wrote the index.
const sqliteTextMerge = `INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('crisismerge', 4)`

// sqliteLean stops the insert of a run's row from writing halo_runs_text: the rows
// from halo_text_state.upto on (by rowid) are not in the index yet, and the store indexes
// them in one statement before any text query reads it, and while no record waits for a
// commit (SQLite.indexText). Writing the index in each commit was half of what halo mcp's
// commits cost (docs/mcp.md, "What a call costs"). A row that is in the index keeps it in
// step as its search text changes, or as it is removed; a row past upto needs nothing.
// A new row's rowid is one more than the largest there, so it is past upto as long as upto
// never passes the largest rowid: a removal lowers upto to the largest left.
//
// It also drops step 5's index of the ids ignoring case: a word that begins a run id was
// then looked up in the primary key's index in each spelling of its beginning (until step
// 9, which took that index away and made halo_run_ids).
const sqliteLean = `DROP INDEX halo_runs_id_nocase;
DROP TRIGGER halo_runs_text_insert;
DROP TRIGGER halo_runs_text_update;
DROP TRIGGER halo_runs_text_delete;
CREATE TABLE halo_text_state (upto integer NOT NULL);
INSERT INTO halo_text_state (upto) SELECT coalesce(max(rowid), 0) FROM halo_runs;
CREATE TRIGGER halo_runs_text_delete AFTER DELETE ON halo_runs BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) SELECT 'delete', old.rowid, old.search WHERE old.rowid <= (SELECT upto FROM halo_text_state); UPDATE halo_text_state SET upto = min(upto, coalesce((SELECT max(rowid) FROM halo_runs), 0)); END;
CREATE TRIGGER halo_runs_text_update AFTER UPDATE OF search ON halo_runs WHEN old.search IS NOT new.search AND old.rowid <= (SELECT upto FROM halo_text_state) BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) VALUES ('delete', old.rowid, old.search); INSERT INTO halo_runs_text (rowid, search) VALUES (new.rowid, new.search); END`

// keyedStep is the schema step that SQLite.beforeKeyed and afterKeyed surround.
const keyedStep = 9

// sqliteKeyed makes halo_runs again without its primary key of the ids, with a key column
// (runkey.go), keeping every row's rowid (which halo_runs_text refers to) and its indexes
// and triggers. The keys come from temp.halo_row_keys, which SQLite.beforeKeyed makes (a
// row not there, of an id that keys as 0, gets 0), and afterKeyed indexes (key, id). The
// beginnings of the ids, which a text query looks up in any case, move to halo_run_ids,
// written behind the saves as the text index is (SQLite.indexText): lid is the id
// lowercased, run the row's rowid; the rows already in the text index go into it now.
// halo_key_state.next is the first key no process has taken (SQLite.nextKey).
const sqliteKeyed = `CREATE TABLE halo_runs_keyed (
  id text NOT NULL,
  pipeline text NOT NULL,
  status text NOT NULL,
  waiting_for text NOT NULL DEFAULT '',
  error_code text NOT NULL DEFAULT '',
  error_message text NOT NULL DEFAULT '',
  started integer NOT NULL,
  updated integer NOT NULL,
  record text NOT NULL,
  owner text,
  lease_until integer,
  cancel_requested boolean NOT NULL DEFAULT false,
  cost double precision NOT NULL DEFAULT 0,
  violations integer NOT NULL DEFAULT 0,
  file text NOT NULL DEFAULT '',
  search text NOT NULL DEFAULT '',
  tokens_in bigint NOT NULL DEFAULT 0,
  tokens_out bigint NOT NULL DEFAULT 0,
  unpriced boolean NOT NULL DEFAULT false,
  key integer NOT NULL DEFAULT 0
);
INSERT INTO halo_runs_keyed (rowid, id, pipeline, status, waiting_for, error_code, error_message, started, updated, record, owner,
  lease_until, cancel_requested, cost, violations, file, search, tokens_in, tokens_out, unpriced, key)
SELECT r.rowid, id, pipeline, status, waiting_for, error_code, error_message, started, updated, record, owner,
  lease_until, cancel_requested, cost, violations, file, search, tokens_in, tokens_out, unpriced, coalesce(k.key, 0)
FROM halo_runs AS r LEFT JOIN temp.halo_row_keys AS k ON k.rid = r.rowid ORDER BY r.rowid;
DROP TABLE halo_runs;
ALTER TABLE halo_runs_keyed RENAME TO halo_runs;
CREATE INDEX halo_runs_newest ON halo_runs (started DESC, id DESC);
CREATE INDEX halo_runs_running ON halo_runs (lease_until) WHERE status = 'running';
CREATE INDEX halo_runs_owner ON halo_runs (owner) WHERE owner IS NOT NULL;
CREATE INDEX halo_runs_status ON halo_runs (status, started DESC, id DESC);
CREATE INDEX halo_runs_pipeline ON halo_runs (pipeline, started DESC, id DESC);
CREATE INDEX halo_runs_violations ON halo_runs (started DESC, id DESC) WHERE violations > 0;
CREATE TABLE halo_run_ids (lid text NOT NULL, run integer NOT NULL, PRIMARY KEY (lid, run)) WITHOUT ROWID;
INSERT INTO halo_run_ids (lid, run) SELECT lower(id), rowid FROM halo_runs WHERE rowid <= (SELECT upto FROM halo_text_state);
CREATE TABLE halo_key_state (next integer NOT NULL);
INSERT INTO halo_key_state (next) VALUES (1);
CREATE TRIGGER halo_runs_text_delete AFTER DELETE ON halo_runs BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) SELECT 'delete', old.rowid, old.search WHERE old.rowid <= (SELECT upto FROM halo_text_state); DELETE FROM halo_run_ids WHERE lid = lower(old.id) AND run = old.rowid; UPDATE halo_text_state SET upto = min(upto, coalesce((SELECT max(rowid) FROM halo_runs), 0)); END;
CREATE TRIGGER halo_runs_text_update AFTER UPDATE OF search ON halo_runs WHEN old.search IS NOT new.search AND old.rowid <= (SELECT upto FROM halo_text_state) BEGIN INSERT INTO halo_runs_text (halo_runs_text, rowid, search) VALUES ('delete', old.rowid, old.search); INSERT INTO halo_runs_text (rowid, search) VALUES (new.rowid, new.search); END`

// sqliteTextLean makes halo_runs_text again with detail=none and columnsize=0: it keeps
// which rows hold each 3 letters, not where in them they are, nor how long each row's text
// is. A text query's words are GLOB patterns, which SQLite tests against each row the index
// finds (as it did with the positions), and nothing ranks by length. FTS5 alone then took
// about 40% less processor time a row (15.0 and 13.4 µs against 23.4 and 21.1, in chunks of
// 1,000 rows past 20,000, side by side on the 2-core development machine), and the store's
// whole pass about a quarter less (BenchmarkTextIndex; docs/cli.md, "What the text index
// keeps", has it and what a common word's list costs more). The rows are
// indexed again behind the saves as new ones are (upto goes back to 0, and halo_run_ids,
// written in the same pass, is emptied), so that the step itself takes no time: until the
// commit goroutine's idle moments have caught up, the first text query writes what is left.
const sqliteTextLean = `DROP TABLE halo_runs_text;
CREATE VIRTUAL TABLE halo_runs_text USING fts5(search, content='halo_runs', content_rowid='rowid', tokenize='trigram', detail=none, columnsize=0);
INSERT INTO halo_runs_text (halo_runs_text, rank) VALUES ('crisismerge', 4);
DELETE FROM halo_run_ids;
UPDATE halo_text_state SET upto = 0`

// SchemaVersion is the newest schema this halo knows.
var SchemaVersion = len(migrations)

// Migration returns step v (from 1) of the schema in d's SQL, as statements to run in order
// (a statement ends with ";" at the end of a line; a trigger's inner ones do not).
func (d Dialect) Migration(v int) []string {
	s := strings.NewReplacer("{time}", d.Time, "{bytes}", d.Bytes, "{serial}", d.Serial, "{now}", d.Now, "{usage}", d.Usage,
		"{text_index}", d.TextIndex, "{text_merge}", d.TextMerge, "{id_case}", d.IDCase, "{lean}", d.Lean, "{keyed}", d.Keyed, "{text_lean}", d.TextLean,
		"{text_fewer_merges}", d.TextFewerMerges, "{short_ids}", d.ShortIDs).Replace(migrations[v-1])
	var out []string
	for _, st := range strings.Split(s, ";\n") {
		st = strings.TrimSuffix(strings.TrimSpace(st), ";")
		if st = strings.TrimSpace(st); st != "" {
			out = append(out, st)
		}
	}
	return out
}

// SchemaTable is the table that says which steps a store has: one row a version.
const SchemaTable = `CREATE TABLE IF NOT EXISTS halo_schema (version integer PRIMARY KEY, applied {time} NOT NULL DEFAULT {now})`

// SchemaTableSQL returns SchemaTable in d's SQL.
func (d Dialect) SchemaTableSQL() string {
	return strings.NewReplacer("{time}", d.Time, "{now}", d.Now).Replace(SchemaTable)
}
