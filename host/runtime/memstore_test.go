package runtime_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"halolang.dev/halo/host/runtime"
)

// A memStore is a run store in memory for the runtime's tests: records kept as the JSON a
// store writes, so a test can read and edit them as bytes. (host/runstore's stores are
// tested against the contract on their own.)
type memStore struct {
	mu   sync.Mutex
	recs map[string][]byte
}

func newStore() *memStore { return &memStore{recs: map[string][]byte{}} }

// memKey is the key memStores seal paused records with.
var memKey = []byte("memstore seal key, 32 bytes long")

func (s *memStore) SealKey() ([]byte, error) { return memKey, nil }

func (s *memStore) Save(rec *runtime.Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[rec.RunID] = b
	return nil
}

func (s *memStore) Load(id string) (*runtime.Record, error) {
	s.mu.Lock()
	b, ok := s.recs[id]
	s.mu.Unlock()
	if !ok {
		return nil, &runtime.Error{Code: runtime.CodeRun, Message: "no run " + id, Err: errors.New("not found")}
	}
	var rec runtime.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, &runtime.Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: unreadable record: %v", id, err), Err: err}
	}
	if rec.RunID != id {
		return nil, &runtime.Error{Code: runtime.CodeRun, Message: fmt.Sprintf("run %s: the record is of run %s", id, rec.RunID)}
	}
	return &rec, nil
}

func (s *memStore) Latest() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, bestRec := "", runtime.Record{}
	for id, b := range s.recs {
		var rec runtime.Record
		if json.Unmarshal(b, &rec) == nil && rec.Status == runtime.Paused && (best == "" || rec.Updated.After(bestRec.Updated)) {
			best, bestRec = id, rec
		}
	}
	if best == "" {
		return "", &runtime.Error{Code: runtime.CodeRun, Message: "no paused run"}
	}
	return best, nil
}

// bytes returns run id's record as stored.
func (s *memStore) bytes(t *testing.T, id string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.recs[id]
	if !ok {
		t.Fatalf("no record of run %s", id)
	}
	return string(b)
}

// put stores body as run id's record; with seal, sealed again first, as a record that
// verifies but may not fit the file (a paused record edited and sealed with the key).
func (s *memStore) put(t *testing.T, id string, body []byte, seal bool) {
	t.Helper()
	if seal {
		var rec runtime.Record
		if err := json.Unmarshal(body, &rec); err == nil && rec.Status == runtime.Paused {
			runtime.SealRecord(&rec, memKey)
			// Written over the edited JSON, so fields the edit broke for a typed decode stay.
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				sb, _ := json.Marshal(rec.Seal)
				var sv any
				json.Unmarshal(sb, &sv)
				m["seal"] = sv
				body, _ = json.Marshal(m)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[id] = body
}

// dump returns every record, by id, for "nothing changed" checks.
func (s *memStore) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, b := range s.recs {
		out = append(out, id+":"+string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// len returns how many records the store holds.
func (s *memStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.recs)
}

// idStore is a memStore that makes the ids of its runs.
type idStore struct {
	*memStore
	n int
}

func (s *idStore) NewRunID() string { s.n++; return fmt.Sprintf("store%d", s.n) }

// A store that makes run ids (runtime.IDMaker) makes those of the runs it keeps, unless the
// configuration names its own NewID.
func TestStoreMakesRunIDs(t *testing.T) {
	store := &idStore{memStore: newStore()}
	cfg := runtime.Config{Tools: reportingRegistry(t), Store: store}
	rt, err := runtime.Load("test.halo", progressSrc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"store1", "store2"} {
		if res := run(t, rt, "Index", nil); res.RunID != want {
			t.Errorf("run id %q, want the store's %q", res.RunID, want)
		}
		if _, err := store.Load(want); err != nil {
			t.Errorf("the store has no run %s: %v", want, err)
		}
	}
	cfg.NewID = func() string { return "mine" }
	if rt, err = runtime.Load("test.halo", progressSrc, cfg); err != nil {
		t.Fatal(err)
	}
	if res := run(t, rt, "Index", nil); res.RunID != "mine" {
		t.Errorf("run id %q, want the configuration's", res.RunID)
	}
}
