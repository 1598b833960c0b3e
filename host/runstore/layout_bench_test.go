//go:build unix

package runstore

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/cputime"
)

// BenchRecord is the record of one call of scripts/bench-mcp.sh's pipeline (a one-stage
// mocked agent call), as halo mcp saves it: what the store's benchmarks save.
const BenchRecord = `{"runId":"5ed08d4d388e8dcd","file":"flow.halo","pipeline":"Greet","status":"completed","inputs":{"name":"Ada"},"output":"Hello!","meta":{"runId":"5ed08d4d388e8dcd","cost":0,"calls":[{"kind":"llm","target":"Greeter.greet","agent":"Greeter","model":"openai/gpt-4o-mini","usage":{"inputTokens":0,"outputTokens":0},"durationMs":0,"mocked":true}],"violations":[],"paused":null},"data":{"name":"Ada"},"events":[{"type":"llm","time":"2026-12-01T22:42:40.380867578Z","runId":"5ed08d4d388e8dcd","at":"flow.halo:5:8","agent":"Greeter","target":"Greeter.greet","model":"openai/gpt-4o-mini","prompt":"Say hello to Ada.","answer":"Hello!","step":1,"usage":{"inputTokens":0,"outputTokens":0},"mocked":true,"attempt":1},{"type":"stage","time":"2026-12-01T22:42:40.380870744Z","runId":"5ed08d4d388e8dcd","at":"flow.halo:5:8","target":"Greeter.greet"},{"type":"run","time":"2026-12-01T22:42:40.380871546Z","runId":"5ed08d4d388e8dcd","status":"completed"}],"started":"2026-12-01T22:42:40.380821252Z","updated":"2026-12-01T22:42:40.380877617Z","recording":{"calls":[{"kind":"llm","target":"Greeter.greet","at":"flow.halo:5:8","step":1,"response":{"text":"Hello!","message":{"role":"assistant","text":"Hello!"},"usage":{"inputTokens":0,"outputTokens":0},"cost":0,"stopReason":"end","attempts":1}}]}}`

// BenchmarkCommitLayout measures what writing a run's row costs the embedded store in three
// layouts, to say which one a save's time depends on: the store's own commit of saves of
// the runs it makes ids for (store: rows found by (key, id), the keys of a commit's rows
// beside each other at the end of halo_runs_key, runkey.go), the same with random 64-bit
// ids (random-ids: as halo made them before schema step 9, each key at a random place in
// the index, as the index of the ids was then), and a table of the same columns and list
// indexes whose rows are found by their rowid, with no index of keys or ids at all
// (rowid: the least a row can cost). Each writes layoutRows rows a commit, as halo mcp's
// 20 ms commits do with one client, into a store that holds 20,000 runs (-layout-runs), and reports the
// process's processor time per row (cpu-µs/op, encoding the record included) and the
// bytes it wrote per row (written-B/op: the log's pages, and the checkpoint's copies of
// them into the database), which unlike the processor time hardly varies from run to run.
//
//	go test -run '^$' -bench CommitLayout -benchtime 20000x ./host/runstore [-args -layout-runs N]
//
// Figures: docs/mcp.md, "What a call costs".
func BenchmarkCommitLayout(b *testing.B) {
	var tmpl runtime.Record
	if err := json.Unmarshal([]byte(BenchRecord), &tmpl); err != nil {
		b.Fatal(err)
	}
	randomIDs := func(*SQLite) string {
		var id [8]byte
		rand.Read(id[:])
		return hex.EncodeToString(id[:])
	}
	storeIDs := (*SQLite).NewRunID
	b.Run("store", func(b *testing.B) { benchLayout(b, tmpl, storeIDs, false) })
	b.Run("random-ids", func(b *testing.B) { benchLayout(b, tmpl, randomIDs, false) })
	b.Run("rowid", func(b *testing.B) { benchLayout(b, tmpl, randomIDs, true) })
}

var layoutRuns = flag.Int("layout-runs", 20_000, "the runs BenchmarkCommitLayout's store holds before it measures")

// layoutRows is how many rows one commit of BenchmarkCommitLayout writes.
const layoutRows = 100

// keyedLayout is BenchmarkCommitLayout's table whose rows are found by their rowid:
// halo_runs' columns and list indexes as schema step 11 made them (newestLast), without the
// index of keys and ids.
const keyedLayout = `CREATE TABLE halo_keyed (id text NOT NULL, file text NOT NULL, pipeline text NOT NULL, status text NOT NULL, waiting_for text NOT NULL,
  error_code text NOT NULL, error_message text NOT NULL, started integer NOT NULL, updated integer NOT NULL, cost double precision NOT NULL,
  violations integer NOT NULL, search text NOT NULL, record text NOT NULL, tokens_in bigint NOT NULL, tokens_out bigint NOT NULL, unpriced boolean NOT NULL,
  key integer NOT NULL);
CREATE INDEX halo_keyed_newest ON halo_keyed (started, id);
CREATE INDEX halo_keyed_status ON halo_keyed (status, started, id) WHERE ` + UnfinishedRuns + `;
CREATE INDEX halo_keyed_pipeline ON halo_keyed (pipeline, started, id)`

func benchLayout(b *testing.B, tmpl runtime.Record, id func(*SQLite) string, keyed bool) {
	s, err := OpenSQLite(filepath.Join(b.TempDir(), ".halo", "runs"), SQLiteOptions{Exclusive: true, GroupCommit: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var insert func([]*pending) error
	if keyed {
		for _, q := range strings.Split(keyedLayout, ";\n") {
			if _, err := s.w.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		row := "(?, " + rowValues[1:] // the rowid, then the values as the store writes them
		st, err := s.w.Prepare("INSERT INTO halo_keyed (rowid, " + runColumns + ") VALUES " + strings.TrimSuffix(strings.Repeat(row+", ", layoutRows), ", "))
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		var key int64
		args := make([]any, 0, (nRunColumns+1)*layoutRows)
		insert = func(ps []*pending) error {
			batch := make(map[string]*pending, len(ps))
			for _, p := range ps {
				batch[p.id] = p
			}
			s.commits.packAll(batch) // as the store's commit does, from here as store's write is
			args = args[:0]
			for _, p := range ps {
				key++
				args = rowArgs(append(args, key), p)
			}
			_, err := st.Exec(args...)
			return err
		}
	} else {
		insert = func(ps []*pending) error {
			batch := make(map[string]*pending, len(ps))
			for _, p := range ps {
				batch[p.id] = p
			}
			s.commits.write(batch)
			for _, p := range ps {
				if p.err != nil {
					return p.err
				}
			}
			return nil
		}
	}
	t0 := time.Now()
	var k int64
	commit := func() {
		ps := make([]*pending, layoutRows)
		for i := range ps {
			rec := tmpl
			rec.RunID = id(s)
			rec.Meta.RunID = rec.RunID
			rec.Started = t0.Add(time.Duration(k) * time.Millisecond)
			rec.Updated = rec.Started
			k++
			ps[i] = &pending{kind: putSave, id: rec.RunID, key: s.keys.of(rec.RunID), rec: &rec}
		}
		if err := insert(ps); err != nil {
			b.Fatal(err)
		}
	}
	for range *layoutRuns / layoutRows {
		commit()
	}
	cpu0, w0 := cputime.Self(), written(b)
	b.ResetTimer()
	for range (b.N + layoutRows - 1) / layoutRows {
		commit()
	}
	b.StopTimer()
	b.ReportMetric(float64((cputime.Self()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(written(b)-w0)/float64(b.N), "written-B/op")
}

// written returns how many bytes this process has written with system calls so far
// (wchar in Linux's /proc/self/io: the store's log, database and checkpoint writes).
func written(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		b.Skipf("no /proc/self/io here: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no wchar in /proc/self/io")
	return 0
}
