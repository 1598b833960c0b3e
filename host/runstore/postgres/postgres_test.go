package postgres_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/jackc/pgx/v5"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runstore/postgres"
	"halolang.dev/halo/host/runstore/runstoretest"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func open(t *testing.T, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var urls = map[runstore.Store]string{}

func TestContract(t *testing.T) {
	runstoretest.Run(t, runstoretest.Config{
		Open: func(t *testing.T) runstore.Store {
			url := pgtest.DB(t)
			s := open(t, url, postgres.Options{Owner: "a"})
			urls[s] = url
			return s
		},
		Peer: func(t *testing.T, s runstore.Store) runstore.Store {
			return open(t, urls[s], postgres.Options{Owner: "b"})
		},
	})
}

// Opening migrates once; opening again (another replica, a restart) changes nothing; a
// schema from a newer halo is refused.
func TestMigrations(t *testing.T) {
	url := pgtest.DB(t)
	a := open(t, url, postgres.Options{})
	a.Close()
	b := open(t, url, postgres.Options{})
	defer b.Close()
	if err := b.Save(runstoretest.NewRecord("r1", runtime.Completed)); err != nil {
		t.Fatal(err)
	}
	c := open(t, url, postgres.Options{})
	if _, err := c.Load("r1"); err != nil {
		t.Errorf("a record did not survive opening again: %v", err)
	}
	c.Close()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), `INSERT INTO halo_schema (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(context.Background(), url, postgres.Options{}); errcode.Code(err) != runstore.CodeStore {
		t.Errorf("a schema from a newer halo: %v, want %s", err, runstore.CodeStore)
	}
}

// A run whose replica stops renewing its lease is failed HOST_LOST by another, with the
// events it had so far; the lost replica's late save is refused.
func TestLeaseExpires(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	a := open(t, url, postgres.Options{Owner: "a", Lease: 300 * time.Millisecond})
	defer a.Close()
	b := open(t, url, postgres.Options{Owner: "b", Lease: 300 * time.Millisecond})
	defer b.Close()
	rec := runstoretest.NewRecord("r1", runtime.Running)
	if err := a.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := a.AppendEvent(ctx, "r1", i, runtime.Event{Type: "tool", RunID: "r1", Attempt: i}); err != nil {
			t.Fatal(err)
		}
	}
	if lost, err := b.Expire(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("expired a fresh lease: %v %v", lost, err)
	}
	// a renews: still held after the first lease would have run out.
	for range 4 {
		time.Sleep(100 * time.Millisecond)
		if _, err := a.Keep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if lost, err := b.Expire(ctx); err != nil || len(lost) != 0 {
		t.Fatalf("expired a renewed lease: %v %v", lost, err)
	}
	time.Sleep(400 * time.Millisecond) // a stops renewing
	lost, err := b.Expire(ctx)
	if err != nil || len(lost) != 1 || lost[0] != "r1" {
		t.Fatalf("expired %v %v, want r1", lost, err)
	}
	got, err := b.Load("r1")
	if err != nil || got.Status != runtime.Failed || got.Error.Code != runstore.CodeHostLost || len(got.Events) != 4 || got.Events[2].Attempt != 3 {
		t.Fatalf("lost run: %+v %v", got, err)
	}
	rec.Status = runtime.Completed
	if err := a.Save(rec); errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("the lost replica's late save: %v, want %s", err, runstore.CodeTaken)
	}
}

// Cancelling a run held by another replica reaches it: as a note, and through Keep.
func TestCancelReachesHolder(t *testing.T) {
	url := pgtest.DB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := open(t, url, postgres.Options{Owner: "a"})
	defer a.Close()
	b := open(t, url, postgres.Options{Owner: "b"})
	defer b.Close()
	notes := make(chan runstore.Note, 16)
	done := make(chan struct{})
	go func() { a.Listen(ctx, func(n runstore.Note) { notes <- n }); close(done) }()
	defer func() { cancel(); <-done }()
	// Listen says so (a note for every run) once it listens: only then is a NOTIFY heard.
	select {
	case n := <-notes:
		if n.RunID != "" {
			t.Fatalf("first note %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not start")
	}
	if err := a.Start(ctx, runstoretest.NewRecord("r1", runtime.Running)); err != nil {
		t.Fatal(err)
	}
	if err := b.RequestCancel(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case n := <-notes:
			got = n.RunID == "r1" && n.Kind == runstore.NoteCancel
		case <-timeout:
			t.Fatal("no cancel note")
		}
	}
	ids, err := a.Keep(ctx)
	if err != nil || len(ids) != 1 || ids[0] != "r1" {
		t.Errorf("keep: %v %v", ids, err)
	}
	if err := b.RequestCancel(ctx, "nope"); err == nil {
		t.Errorf("cancel of an unknown run accepted")
	}
}

// A record whose text holds a NUL escape (a model may answer one) is saved and read back.
func TestNULInRecord(t *testing.T) {
	s := open(t, pgtest.DB(t), postgres.Options{})
	defer s.Close()
	rec := runstoretest.NewRecord("r1", runtime.Completed)
	rec.Output = "a\x00b"
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("r1")
	if err != nil || got.Output != "a\x00b" {
		t.Fatalf("%+v %v", got, err)
	}
}

// A URL that is not PostgreSQL's, or a server that is not there, is a STORE error.
func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, url := range []string{"postgres://%zz", "postgres://nobody@/x?host=/nonexistent&connect_timeout=2"} {
		if _, err := postgres.Open(ctx, url, postgres.Options{}); errcode.Code(err) != runstore.CodeStore {
			t.Errorf("%s: %v, want %s", url, err, runstore.CodeStore)
		}
	}
}

// A database of schema version 3 (before tokens) gets each run's tokens and unpriced mark
// from its record when a newer halo opens it, a record with a NUL escape too; a record
// without calls gets none.
func TestMigratesUsage(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	d := runstore.PostgresDialect
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(conn.Exec(ctx, d.SchemaTableSQL()))
	for v := 1; v <= 3; v++ {
		for _, st := range d.Migration(v) {
			must(conn.Exec(ctx, st))
		}
		must(conn.Exec(ctx, `INSERT INTO halo_schema (version) VALUES ($1)`, v))
	}
	with := runstoretest.NewRecord("old1", runtime.Completed)
	with.Meta.Calls = runstoretest.UsageCalls()
	with.Output = "a\x00b"
	without := runstoretest.NewRecord("old2", runtime.Completed)
	without.Meta.Calls = nil
	for _, rec := range []*runtime.Record{with, without} {
		raw, err := runstore.MarshalRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		must(conn.Exec(ctx, `INSERT INTO halo_runs (id, pipeline, status, started, updated, record) VALUES ($1, 'P', 'completed', $2, $3, $4)`,
			rec.RunID, rec.Started, rec.Updated, string(raw)))
	}
	s := open(t, url, postgres.Options{})
	defer s.Close()
	p, err := s.List(ctx, runstore.Query{})
	if err != nil || len(p.Runs) != 2 {
		t.Fatalf("%+v %v", p, err)
	}
	runstoretest.CheckUsage(t, p.Runs[1])
	if r := p.Runs[0]; r.RunID != "old2" || r.TokensIn != 0 || r.TokensOut != 0 || r.Unpriced {
		t.Errorf("a run without calls: %+v", r)
	}
	if got, err := s.Load("old1"); err != nil || got.Output != "a\x00b" {
		t.Errorf("the record after the migration: %+v %v", got, err)
	}
}

// Where pg_trgm cannot be added (a user who may not create in the database), the store
// opens without the text index, says so in its log, and searches all the same; once the
// extension is there, the next open makes the index.
func TestTextIndexWithoutExtension(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	role := "plain_" + conn.Config().Database
	for _, st := range []string{`CREATE ROLE ` + role + ` LOGIN`, `CREATE SCHEMA AUTHORIZATION ` + role} {
		if _, err := conn.Exec(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	plain := strings.Replace(url, "postgres://postgres@", "postgres://"+role+"@", 1) + "&search_path=" + role + ",public"
	var log bytes.Buffer
	s := open(t, plain, postgres.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &log})})
	if !strings.Contains(log.String(), "CREATE EXTENSION pg_trgm failed") {
		t.Errorf("no word of the missing index in the log:\n%s", log.String())
	}
	rec := runstoretest.NewRecord("r1", runtime.Completed)
	rec.Inputs = map[string]any{"w": "needle"}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	if p, err := s.List(ctx, runstore.Query{Text: "needle"}); err != nil || len(p.Runs) != 1 {
		t.Errorf("a search without the index: %+v %v", p, err)
	}
	s.Close()
	hasIndex := func() bool {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass('`+role+`.halo_runs_search_trgm') IS NOT NULL`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if hasIndex() {
		t.Fatal("an index was made without pg_trgm")
	}
	if _, err := conn.Exec(ctx, `CREATE EXTENSION pg_trgm`); err != nil {
		t.Fatal(err)
	}
	log.Reset()
	s = open(t, plain, postgres.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &log})})
	defer s.Close()
	if !hasIndex() || log.Len() != 0 {
		t.Errorf("with pg_trgm there, the index is made (%v) and nothing logged:\n%s", hasIndex(), log.String())
	}
	if p, err := s.List(ctx, runstore.Query{Text: "needle"}); err != nil || len(p.Runs) != 1 {
		t.Errorf("a search with the index: %+v %v", p, err)
	}
}
