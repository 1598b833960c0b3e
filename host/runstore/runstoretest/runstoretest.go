// Package runstoretest checks a runstore.Store against the contract halo serve relies on:
// records saved and loaded whole, exactly one claim of a paused run among concurrent ones
// (in one process and, for a shared store, in two), lists newest first by cursor, events,
// the approval key and used links. host/runstore and host/runstore/postgres run it.
package runstoretest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Config says how to get stores to check.
type Config struct {
	// Open returns a new, empty store; the test closes it.
	Open func(t *testing.T) runstore.Store
	// Peer, when set, returns a second store on the same data as s, as another process
	// would open it (a shared store); nil for a store one process uses alone.
	Peer func(t *testing.T, s runstore.Store) runstore.Store
}

// Run runs every check as a subtest of t.
func Run(t *testing.T, cfg Config) {
	t.Run("StartSaveLoad", func(t *testing.T) { startSaveLoad(t, cfg) })
	t.Run("StartTaken", func(t *testing.T) { startTaken(t, cfg) })
	t.Run("ClaimOnce", func(t *testing.T) { claimOnce(t, cfg) })
	t.Run("ClaimStale", func(t *testing.T) { claimStale(t, cfg) })
	t.Run("List", func(t *testing.T) { list(t, cfg) })
	t.Run("NotFound", func(t *testing.T) { notFound(t, cfg) })
	t.Run("Events", func(t *testing.T) { events(t, cfg) })
	t.Run("Secret", func(t *testing.T) { secret(t, cfg) })
	t.Run("UseLink", func(t *testing.T) { useLink(t, cfg) })
	t.Run("Filters", func(t *testing.T) { filters(t, cfg) })
	t.Run("DeletePrune", func(t *testing.T) { deletePrune(t, cfg) })
	t.Run("TextFollowsSaves", func(t *testing.T) { textFollowsSaves(t, cfg) })
	if cfg.Peer != nil {
		t.Run("PeerFenced", func(t *testing.T) { peerFenced(t, cfg) })
	}
}

var clock atomic.Int64

// now is a clock that moves forward a millisecond a call, so records are told apart.
func now() time.Time {
	return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(clock.Add(1)) * time.Millisecond)
}

// NewRecord returns a record of pipeline P with status st.
func NewRecord(id string, st runtime.Status) *runtime.Record {
	t := now()
	rec := &runtime.Record{RunID: id, Pipeline: "P", Status: st, Inputs: map[string]any{"x": "y"},
		Meta: runtime.Meta{RunID: id, Calls: []runtime.CallInfo{}, Violations: []runtime.ViolationInfo{}}, Started: t, Updated: t}
	if st == runtime.Paused {
		rec.Meta.Paused = &runtime.PauseInfo{WaitingFor: "yield", Question: "ok?"}
		rec.Resume = &runtime.ResumePoint{Stage: 1}
		rec.Events = []runtime.Event{{Type: "paused", RunID: id, Channel: "yield", Time: t}}
	}
	return rec
}

// UsageCalls are the calls of a run with two model calls, one of a model the price table
// does not know, and a tool call: 1200 tokens in and 345 out (CheckUsage).
func UsageCalls() []runtime.CallInfo {
	return []runtime.CallInfo{
		{Kind: "llm", Target: "A.t", Model: "openai/gpt-4o", Usage: &model.Usage{InputTokens: 1000, OutputTokens: 300}, Cost: 0.25},
		{Kind: "tool", Target: "T.m"},
		{Kind: "llm", Target: "A.t", Model: "openai/some-new-model", Usage: &model.Usage{InputTokens: 200, OutputTokens: 45}, Unpriced: true},
	}
}

// CheckUsage fails t unless s is the summary of a run whose calls are UsageCalls.
func CheckUsage(t *testing.T, s runstore.Summary) {
	t.Helper()
	if s.TokensIn != 1200 || s.TokensOut != 345 || !s.Unpriced {
		t.Errorf("run %s: %d tokens in, %d out, unpriced %v; want 1200, 345, true", s.RunID, s.TokensIn, s.TokensOut, s.Unpriced)
	}
}

func open(t *testing.T, cfg Config) runstore.Store {
	t.Helper()
	s := cfg.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

func startSaveLoad(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	rec := NewRecord("run1", runtime.Running)
	if err := s.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("run1")
	if err != nil || got.Status != runtime.Running || got.Inputs["x"] != "y" {
		t.Fatalf("load a started run: %+v %v", got, err)
	}
	if err := s.Start(ctx, NewRecord("run1", runtime.Running)); err == nil {
		t.Errorf("a second Start of one run id was accepted")
	}
	rec.Status, rec.Output, rec.Updated = runtime.Completed, map[string]any{"n": 1.0}, now()
	rec.Events = []runtime.Event{{Type: "run", RunID: "run1", Status: runtime.Completed}}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	got, err = s.Load("run1")
	if err != nil || got.Status != runtime.Completed || fmt.Sprint(got.Output) != "map[n:1]" || len(got.Events) != 1 {
		t.Fatalf("load a completed run: %+v %v", got, err)
	}
	p := NewRecord("run2", runtime.Paused)
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Latest(); err != nil || id != "run2" {
		t.Errorf("latest: %q %v", id, err)
	}
}

func claimOnce(t *testing.T, cfg Config) {
	s := open(t, cfg)
	stores := []runstore.Store{s}
	if cfg.Peer != nil {
		peer := cfg.Peer(t, s)
		t.Cleanup(func() { peer.Close() })
		stores = append(stores, peer)
	}
	ctx := context.Background()
	if err := s.Save(NewRecord("p1", runtime.Paused)); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		st := stores[i%len(stores)]
		wg.Go(func() {
			rec, err := st.Load("p1")
			if err != nil {
				t.Error(err)
				return
			}
			if rec.Status != runtime.Paused {
				return // another claim already took it: that is the refusal too
			}
			err = st.Claim(ctx, rec, runstore.Signal{Channel: "yield", Payload: "ok", Via: "test"})
			switch {
			case err == nil:
				wins.Add(1)
			case errcode.Code(err) != runstore.CodeTaken:
				t.Errorf("a losing claim: %v, want %s", err, runstore.CodeTaken)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims succeeded, want exactly 1", wins.Load())
	}
	got, err := s.Load("p1")
	if err != nil || got.Status != runtime.Running {
		t.Errorf("a claimed run loads as %+v %v, want running", got, err)
	}
}

func claimStale(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	if err := s.Save(NewRecord("p2", runtime.Paused)); err != nil {
		t.Fatal(err)
	}
	old, err := s.Load("p2")
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := s.Load("p2")
	if err := s.Claim(ctx, fresh, runstore.Signal{Channel: "yield"}); err != nil {
		t.Fatal(err)
	}
	fresh.Status, fresh.Updated = runtime.Paused, now() // it paused again, further on
	if err := s.Save(fresh); err != nil {
		t.Fatal(err)
	}
	if err := s.Claim(ctx, old, runstore.Signal{Channel: "yield"}); errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("a claim of a record that changed since it was loaded: %v, want %s", err, runstore.CodeTaken)
	}
	if err := s.Claim(ctx, NewRecord("nope", runtime.Paused), runstore.Signal{}); err == nil {
		t.Errorf("a claim of an unknown run was accepted")
	}
}

func list(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	var want []string
	for i := range 7 {
		st := []runtime.Status{runtime.Completed, runtime.Failed, runtime.Paused}[i%3]
		rec := NewRecord(fmt.Sprintf("l%d", i), st)
		if i == 6 {
			rec.Pipeline = "Q"
			rec.Meta.Cost = 0.25
			rec.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "Block", Phase: "input"}, {Policy: "P", Rule: "Redact", Phase: "output"}}
			rec.Meta.Calls = UsageCalls()
		}
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
		want = append([]string{rec.RunID}, want...)
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := s.List(ctx, runstore.Query{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Runs) > 3 || pages > 5 {
			t.Fatalf("page of %d runs (page %d)", len(p.Runs), pages)
		}
		for _, r := range p.Runs {
			got = append(got, r.RunID)
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("paged list %v, want %v (newest first)", got, want)
	}
	p, err := s.List(ctx, runstore.Query{Status: runtime.Paused})
	if err != nil || len(p.Runs) != 2 || p.Runs[0].RunID != "l5" || p.Runs[0].Waiting != "yield" {
		t.Errorf("paused runs: %+v %v", p, err)
	}
	p, err = s.List(ctx, runstore.Query{Pipeline: "Q"})
	if err != nil || len(p.Runs) != 1 || p.Runs[0].RunID != "l6" || p.Runs[0].Cost != 0.25 || p.Runs[0].Violations != 2 {
		t.Errorf("runs of Q (with its cost 0.25 and 2 violations): %+v %v", p, err)
	} else {
		CheckUsage(t, p.Runs[0])
	}
	p, err = s.List(ctx, runstore.Query{Pipeline: "P", Limit: 1})
	if err != nil || len(p.Runs) != 1 || p.Runs[0].TokensIn != 0 || p.Runs[0].TokensOut != 0 || p.Runs[0].Unpriced {
		t.Errorf("a run without model calls: %+v %v, want no tokens, priced", p, err)
	}
	if _, err := s.List(ctx, runstore.Query{Cursor: "not-a-cursor"}); errcode.Code(err) != runstore.CodeCursor {
		t.Errorf("a forged cursor: %v, want %s", err, runstore.CodeCursor)
	}
}

func notFound(t *testing.T, cfg Config) {
	s := open(t, cfg)
	for _, id := range []string{"nope", "../etc/passwd", ""} {
		_, err := s.Load(id)
		if errcode.Code(err) != runtime.CodeRun {
			t.Errorf("load %q: %v, want %s", id, err, runtime.CodeRun)
		}
	}
	if _, err := s.Load("nope"); !runstore.IsNotFound(err) {
		t.Errorf("an unknown run is not IsNotFound: %v", err)
	}
	if _, _, err := s.Events(context.Background(), "nope", 0); !runstore.IsNotFound(err) {
		t.Errorf("events of an unknown run: %v", err)
	}
}

func events(t *testing.T, cfg Config) {
	s := open(t, cfg)
	rec := NewRecord("e1", runtime.Completed)
	for i := range 5 {
		rec.Events = append(rec.Events, runtime.Event{Type: "tool", RunID: "e1", Target: fmt.Sprintf("T.m%d", i)})
	}
	if err := s.Save(rec); err != nil {
		t.Fatal(err)
	}
	evs, st, err := s.Events(context.Background(), "e1", 3)
	if err != nil || st != runtime.Completed || len(evs) != 2 || evs[0].Target != "T.m3" {
		t.Errorf("events after 3: %+v %s %v", evs, st, err)
	}
	evs, _, err = s.Events(context.Background(), "e1", 99)
	if err != nil || len(evs) != 0 {
		t.Errorf("events after the last: %+v %v", evs, err)
	}
}

func secret(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	calls := 0
	gen := func() ([]byte, error) {
		calls++
		return []byte(fmt.Sprintf("%032d", calls)), nil
	}
	a, err := s.Secret(ctx, gen)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Secret(ctx, gen)
	if err != nil || string(a) != string(b) || calls != 1 {
		t.Errorf("secret %q then %q (%d made), want one key kept", a, b, calls)
	}
	if cfg.Peer != nil {
		peer := cfg.Peer(t, s)
		defer peer.Close()
		c, err := peer.Secret(ctx, gen)
		if err != nil || string(c) != string(a) {
			t.Errorf("another process's key %q, want the same %q", c, a)
		}
	}
}

func useLink(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	if first, err := s.UseLink(ctx, "link1", "r"); err != nil || !first {
		t.Fatalf("first use: %v %v", first, err)
	}
	if first, err := s.UseLink(ctx, "link1", "r"); err != nil || first {
		t.Errorf("second use: %v %v, want refused", first, err)
	}
}

// startTaken: a run that starts with the id of a run the store has already (a random id
// drawn twice, or another process's) fails with CodeTaken, at Start or at the latest as its
// record is committed, and the record there is left as it was; a run started beside it is
// saved.
func startTaken(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	old := NewRecord("dup1", runtime.Completed)
	old.Output = map[string]any{"n": 1.0}
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	if err := syncStore(s); err != nil {
		t.Fatal(err)
	}
	other := NewRecord("dup2", runtime.Running)
	if err := s.Start(ctx, other); err != nil {
		t.Fatal(err)
	}
	again := NewRecord("dup1", runtime.Running)
	again.Inputs = map[string]any{"x": "other"}
	err := s.Start(ctx, again)
	if err == nil {
		again.Status, again.Output, again.Updated = runtime.Completed, map[string]any{"n": 2.0}, now()
		if err = s.Save(again); err == nil {
			err = syncStore(s)
		}
		if errcode.Code(err) == runstore.CodeTaken { // and a later save of it is refused too
			again.Updated = now()
			err2 := s.Save(again)
			if err2 == nil {
				err2 = syncStore(s)
			}
			if errcode.Code(err2) != runstore.CodeTaken {
				t.Errorf("a later save of the run whose id was taken: %v, want %s", err2, runstore.CodeTaken)
			}
		}
	}
	if errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("a run started with the id of a saved run: %v, want %s", err, runstore.CodeTaken)
	}
	syncStore(s) // which may say again what was refused
	got, err := s.Load("dup1")
	if err != nil || got.Status != runtime.Completed || got.Inputs["x"] != "y" || fmt.Sprint(got.Output) != "map[n:1]" {
		t.Errorf("the saved run after another started with its id: %+v %v", got, err)
	}
	other.Status, other.Updated = runtime.Completed, now()
	if err := s.Save(other); err != nil {
		t.Fatal(err)
	}
	if err := syncStore(s); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load("dup2"); err != nil || got.Status != runtime.Completed {
		t.Errorf("the run started beside it: %+v %v", got, err)
	}
}

// syncStore commits what s has queued, for a store that queues saves.
func syncStore(s runstore.Store) error {
	if q, ok := s.(interface{ Sync() error }); ok {
		return q.Sync()
	}
	return nil
}

// peerFenced: a run held by one process cannot be saved by another.
func peerFenced(t *testing.T, cfg Config) {
	s := open(t, cfg)
	peer := cfg.Peer(t, s)
	defer peer.Close()
	ctx := context.Background()
	rec := NewRecord("f1", runtime.Running)
	if err := s.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	other := *rec
	other.Status = runtime.Completed
	if err := peer.Save(&other); errcode.Code(err) != runstore.CodeTaken {
		t.Errorf("another process saved a run it does not hold: %v", err)
	}
	rec.Status = runtime.Completed
	if err := s.Save(rec); err != nil {
		t.Errorf("the holder's save: %v", err)
	}
}

// filters: every filter of a Query holds, in both stores alike.
func filters(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 8 {
		rec := NewRecord(fmt.Sprintf("q%d", i), []runtime.Status{runtime.Completed, runtime.Failed}[i%2])
		rec.Started, rec.Updated = t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour)
		rec.Inputs = map[string]any{"order": fmt.Sprintf("ORD-%d", i)}
		if i%3 == 0 {
			rec.Meta.Calls = []runtime.CallInfo{{Kind: "tool", Target: "Pay.create_refund"}}
		}
		if i == 5 {
			rec.Meta.Violations = []runtime.ViolationInfo{{Policy: "P", Rule: "Block"}}
		}
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	old := NewRecord("qidx9", runtime.Completed)
	old.Started, old.Updated = t0.Add(-time.Hour), t0.Add(-time.Hour)
	old.Inputs = map[string]any{"order": "none*?[x]"}
	if err := s.Save(old); err != nil {
		t.Fatal(err)
	}
	upper := NewRecord("QCase1", runtime.Completed) // an id of capitals (halo's own are lowercase hex)
	upper.Started, upper.Updated = t0.Add(-2*time.Hour), t0.Add(-2*time.Hour)
	if err := s.Save(upper); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    runstore.Query
		want string
	}{
		{runstore.Query{Text: "qcase"}, "QCase1"}, // a run id's beginning ignores case
		{runstore.Query{Text: "QCASE1"}, "QCase1"},
		{runstore.Query{Text: "Pay.create_refund"}, "q6 q3 q0"},
		{runstore.Query{Text: "refund Q6"}, "q6"},             // a word begins the run id
		{runstore.Query{Text: "qidx"}, "qidx9"},               // a longer one
		{runstore.Query{Text: "qidx9 none"}, "qidx9"},         // and a word of its inputs
		{runstore.Query{Text: "ord-?"}, ""},                   // wildcards are letters
		{runstore.Query{Text: "[o]rd-4"}, ""},                 // of every kind
		{runstore.Query{Text: "none*?[x]"}, "qidx9"},          // and found as letters
		{runstore.Query{Text: `rd-4\`}, ""},                   // an escape is a letter too
		{runstore.Query{Text: "ord- 4"}, "q4"},                // each word anywhere
		{runstore.Query{Text: "ord-4 pay.create_refund"}, ""}, // every word must hold
		{runstore.Query{Text: "ord-4"}, "q4"},
		{runstore.Query{Text: "refund", Status: runtime.Failed}, "q3"},
		{runstore.Query{Text: "50%_"}, ""},
		{runstore.Query{Violations: true}, "q5"},
		{runstore.Query{Since: t0.Add(5 * time.Hour)}, "q7 q6 q5"},
		{runstore.Query{Since: t0.Add(1 * time.Hour), Until: t0.Add(4 * time.Hour), Status: runtime.Completed}, "q2"},
	} {
		p, err := s.List(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range p.Runs {
			got = append(got, r.RunID)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%+v: %v, want %q", tc.q, got, tc.want)
		}
	}
}

// textFollowsSaves: a text query finds what a run's newest record holds, not what an
// earlier one did, and nothing of a removed run, even once a new run is saved after it.
func textFollowsSaves(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	find := func(text string) string {
		t.Helper()
		p, err := s.List(ctx, runstore.Query{Text: text})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range p.Runs {
			got = append(got, r.RunID)
		}
		return strings.Join(got, " ")
	}
	rec := NewRecord("t1", runtime.Running)
	rec.Inputs = map[string]any{"word": "alphabet"}
	if err := s.Start(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if got := find("alphabet"); got != "t1" {
		t.Errorf("the started record's word: %q, want t1", got)
	}
	again := *rec
	again.Status, again.Inputs, again.Output = runtime.Completed, map[string]any{"word": "deltawave"}, "epsilon"
	if err := s.Save(&again); err != nil {
		t.Fatal(err)
	}
	if got := find("alphabet"); got != "" {
		t.Errorf("an earlier record's word: %q, want none", got)
	}
	if got := find("deltawave epsilon"); got != "t1" {
		t.Errorf("the newest record's words: %q, want t1", got)
	}
	if _, err := s.Delete(ctx, []string{"t1"}); err != nil {
		t.Fatal(err)
	}
	other := NewRecord("t2", runtime.Completed)
	other.Inputs = map[string]any{"word": "zetafunction"}
	if err := s.Save(other); err != nil {
		t.Fatal(err)
	}
	if got := find("deltawave"); got != "" {
		t.Errorf("a removed run's word: %q, want none", got)
	}
	if got := find("zetafunction"); got != "t2" {
		t.Errorf("the new run's word: %q, want t2", got)
	}
}

// deletePrune: Delete removes finished and paused runs, refuses a running one and then
// removes nothing; Prune removes finished runs older than its time but the newest it keeps,
// never a paused one.
func deletePrune(t *testing.T, cfg Config) {
	s := open(t, cfg)
	ctx := context.Background()
	t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	for i := range 6 {
		rec := NewRecord(fmt.Sprintf("d%d", i), runtime.Completed)
		if i == 1 {
			rec = NewRecord("d1", runtime.Paused)
		}
		rec.Started, rec.Updated = t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour)
		if err := s.Save(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx, NewRecord("live", runtime.Running)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Delete(ctx, []string{"d5", "live"}); errcode.Code(err) != runstore.CodeRunning {
		t.Errorf("removing a running run: %v, want %s", err, runstore.CodeRunning)
	}
	if _, err := s.Load("d5"); err != nil {
		t.Errorf("a refused removal removed d5: %v", err)
	}
	gone, err := s.Delete(ctx, []string{"d5", "nope"})
	if err != nil || len(gone) != 1 || gone[0] != "d5" {
		t.Errorf("delete: %v %v", gone, err)
	}
	if _, err := s.Load("d5"); !runstore.IsNotFound(err) {
		t.Errorf("a removed run loads: %v", err)
	}
	// Finished: d0 d2 d3 d4 (newest d4). Keep the newest 1; of the rest, those started
	// before 03:00: d0, d2.
	n, err := s.Prune(ctx, runstore.Prune{Before: t0.Add(3 * time.Hour), Keep: 1})
	if err != nil || n != 2 {
		t.Errorf("prune: %d %v, want 2", n, err)
	}
	for id, want := range map[string]bool{"d0": false, "d1": true, "d2": false, "d3": true, "d4": true, "live": true} {
		_, err := s.Load(id)
		if (err == nil) != want {
			t.Errorf("after the prune, %s: %v (want kept: %v)", id, err, want)
		}
	}
	if n, err := s.Prune(ctx, runstore.Prune{Keep: 1}); err != nil || n != 1 {
		t.Errorf("prune all but the newest: %d %v, want 1 (d3)", n, err)
	}
}
