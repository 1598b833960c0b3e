package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// A live run's events are kept in a buffer the server recycles once the run is saved: a
// reader that took the run while it was live is then sent to the saved record, which has
// the same events, and the buffer keeps nothing of the run.
func TestStoppedRunSendsReadersToItsRecord(t *testing.T) {
	f, diags := lang.Parse("flows.halo", []byte("agent A [openai/gpt-4o]\n\n# One stage.\npipeline P(x: String) -> String:\n  x |> A.one(\"One.\")\n"))
	if err := diags.Err(); err != nil {
		t.Fatal(err)
	}
	store, err := runstore.OpenSQLite(filepath.Join(t.TempDir(), ".halo", "runs"), runstore.SQLiteOptions{Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	s, err := New(context.Background(), Config{Program: &lang.Program{Files: []*lang.File{f}}, Store: store, Addr: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(0)
	tr := &tracker{s: s}
	now := time.Now().UTC()
	id := newRunID()
	rec := &runtime.Record{RunID: id, File: "flows.halo", Pipeline: "P", Status: runtime.Running, Started: now, Updated: now}
	if _, err := tr.Begin(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	lr := s.liveRun(id)
	if lr == nil || lr.buf == nil {
		t.Fatalf("a new live run has no recycled buffer: %+v", lr)
	}
	buf := lr.buf
	evs := []runtime.Event{
		{Type: "llm", Time: now, RunID: id, Target: "A.one", Answer: "one"},
		{Type: "stage", Time: now, RunID: id, Target: "A.one", Output: "one"},
	}
	for _, e := range evs {
		s.onEvent(e)
	}
	r := httptest.NewRequest("GET", "/api/runs/"+id+"/events", nil)
	got, over, err := s.eventsAfter(r, id, 0)
	if err != nil || over || len(got) != 2 || got[1].Output != "one" {
		t.Fatalf("live events: %v %v %v", got, over, err)
	}
	rec.Status, rec.Output, rec.Updated = runtime.Completed, "one", now
	rec.Events = append(evs, runtime.Event{Type: "run", Time: now, RunID: id, Status: runtime.Completed})
	if err := tr.Save(rec); err != nil {
		t.Fatal(err)
	}
	for i := range buf {
		if buf[i].RunID != "" || buf[i].Output != nil {
			t.Errorf("the recycled buffer still holds the stopped run's event %d: %+v", i, buf[i])
		}
	}
	if evs, ok := lr.after(0); ok {
		t.Errorf("a stopped run's live events are still read: %v", evs)
	}
	got, over, err = s.eventsAfter(r, id, 0)
	if err != nil || !over {
		t.Fatalf("events after the run stopped: %v %v", over, err)
	}
	want, _ := json.Marshal(rec.Events)
	if b, _ := json.Marshal(got); string(b) != string(want) {
		t.Errorf("events after the run stopped:\n%s\nwant the record's\n%s", b, want)
	}
}

// A poke wakes every channel handed out for the run and for any change, and a change nobody
// waits for leaves nothing counted (so the next is skipped without the lock).
func TestPokesWakeWhoWaits(t *testing.T) {
	p := pokes{m: map[string]chan struct{}{}}
	p.poke("a") // nobody waits
	run, other, anyRun := p.wait("a"), p.wait("b"), p.waitAny()
	if n := p.waiting.Load(); n != 3 {
		t.Fatalf("%d channels counted, want 3", n)
	}
	p.pokeEvent("a")
	select {
	case <-run:
	default:
		t.Error("an event of run a did not wake its waiter")
	}
	select {
	case <-anyRun:
		t.Error("an event woke the runs list's waiter")
	case <-other:
		t.Error("an event of run a woke run b's waiter")
	default:
	}
	p.poke("b")
	for name, ch := range map[string]<-chan struct{}{"b": other, "any": anyRun} {
		select {
		case <-ch:
		default:
			t.Errorf("a change of run b did not wake the waiter for %s", name)
		}
	}
	if n := p.waiting.Load(); n != 0 {
		t.Errorf("%d channels still counted once all were woken", n)
	}
	p.wait("c")
	p.waitAny()
	p.pokeAll()
	if n := p.waiting.Load(); n != 0 || len(p.m) != 0 || p.any != nil {
		t.Errorf("after pokeAll: %d counted, %d waiting", n, len(p.m))
	}
}
