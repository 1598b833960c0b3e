package pool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/tool"
)

// fakeRes is a resource that counts how often it is stopped.
type fakeRes struct {
	id     int
	closed atomic.Int32
}

func (r *fakeRes) Close() error { r.closed.Add(1); return nil }

// fakeProv is a lease's provider: Call returns its resource's id.
type fakeProv struct {
	res    *fakeRes
	closed atomic.Int32
}

func (p *fakeProv) Methods(context.Context) ([]tool.Method, error) { return nil, nil }
func (p *fakeProv) Call(context.Context, tool.Request) (json.RawMessage, error) {
	return json.Marshal(p.res.id)
}
func (p *fakeProv) Close() error { p.closed.Add(1); return nil }

// maker makes fake resources and remembers them.
type maker struct {
	mu   sync.Mutex
	made []*fakeRes
}

func (m *maker) spec(key string) Spec {
	return Spec{
		Key: key, Name: "Fake",
		New: func() (Resource, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			r := &fakeRes{id: len(m.made) + 1}
			m.made = append(m.made, r)
			return r, nil
		},
		Provider: func(r Resource) (tool.Provider, error) { return &fakeProv{res: r.(*fakeRes)}, nil },
	}
}

func (m *maker) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.made)
}

func idOf(t *testing.T, p tool.Provider) int {
	t.Helper()
	b, err := p.Call(context.Background(), tool.Request{})
	if err != nil {
		t.Fatal(err)
	}
	var id int
	json.Unmarshal(b, &id)
	return id
}

func mustLease(t *testing.T, p *Pool, s Spec) tool.Provider {
	t.Helper()
	l, err := p.Lease(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time             { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration)        { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func newPool(t *testing.T, o Options) *Pool { p := New(o); t.Cleanup(func() { p.Close() }); return p }

// A run after another gets the member the first used; runs at the same time get one each
// (a member serves one run at a time) unless it is shared; another key never meets it.
func TestLeaseReusesAMemberPerKey(t *testing.T) {
	var m maker
	p := newPool(t, Options{})
	a := mustLease(t, p, m.spec("k"))
	if idOf(t, a) != 1 {
		t.Fatal("the first lease did not make a member")
	}
	b := mustLease(t, p, m.spec("k")) // while a holds member 1
	if idOf(t, b) != 2 {
		t.Errorf("two runs at once share a member that is not shared")
	}
	a.Close()
	b.Close()
	if m.made[0].closed.Load() != 0 || m.made[1].closed.Load() != 0 {
		t.Fatal("a member was stopped when its run ended")
	}
	c := mustLease(t, p, m.spec("k"))
	if id := idOf(t, c); id != 1 && id != 2 {
		t.Errorf("a later run got a new member %d", id)
	}
	other := mustLease(t, p, m.spec("other"))
	if idOf(t, other) != 3 {
		t.Errorf("another key reached a member of k")
	}
	c.Close()
	other.Close()

	shared := m.spec("s")
	shared.Shared = true
	x, y := mustLease(t, p, shared), mustLease(t, p, shared)
	if idOf(t, x) != idOf(t, y) {
		t.Errorf("a shared member was not shared")
	}
	x.Close()
	y.Close()
	if p.Len() != 4 {
		t.Errorf("pool holds %d members, want 4", p.Len())
	}
	// Closing a lease twice releases it once.
	z := mustLease(t, p, shared)
	z.Close()
	z.Close()
	if w := mustLease(t, p, m.spec("k")); idOf(t, w) == 0 {
		t.Fatal("no member")
	}
}

// A lease whose resource may not serve again (a Bash plugin that left a process behind, a
// provider that asks for a process per run) stops it; the next run gets a new one.
func TestUnreusableMemberStops(t *testing.T) {
	var m maker
	p := newPool(t, Options{})
	s := m.spec("k")
	s.Reusable = func(Resource) bool { return false }
	a := mustLease(t, p, s)
	idOf(t, a)
	a.Close()
	if m.made[0].closed.Load() != 1 {
		t.Fatalf("the member was not stopped")
	}
	if b := mustLease(t, p, s); idOf(t, b) != 2 {
		t.Errorf("a stopped member served again")
	}
}

// An idle member stops after the idle timeout; a negative timeout stops it as its run ends.
func TestIdleMembersStop(t *testing.T) {
	var m maker
	c := &clock{now: time.Unix(1000, 0)}
	p := newPool(t, Options{IdleTimeout: time.Hour, Now: c.Now})
	mustLease(t, p, m.spec("k")).Close()
	c.add(59 * time.Minute)
	p.Sweep()
	if m.made[0].closed.Load() != 0 {
		t.Fatal("stopped before its idle timeout")
	}
	c.add(time.Minute)
	p.Sweep()
	if m.made[0].closed.Load() != 1 || p.Len() != 0 {
		t.Fatal("an idle member outlived its timeout")
	}
	busy := mustLease(t, p, m.spec("k"))
	c.add(2 * time.Hour)
	p.Sweep()
	if m.made[1].closed.Load() != 0 {
		t.Fatal("a member in use was stopped as idle")
	}
	busy.Close()

	var n maker
	now := newPool(t, Options{IdleTimeout: -1})
	mustLease(t, now, n.spec("k")).Close()
	if n.made[0].closed.Load() != 1 {
		t.Fatal("a negative idle timeout kept the member")
	}
}

// A watched file (halo.lock, a .halo file) or a member's own (its executable) that changes
// retires the members made before: idle ones stop at the next lease of their key, busy ones
// when their run ends, and the next run gets a new member.
func TestChangedFilesRetireMembers(t *testing.T) {
	dir := t.TempDir()
	lock, exe := filepath.Join(dir, "halo.lock"), filepath.Join(dir, "plugin")
	os.WriteFile(lock, []byte(`{"v":1}`), 0o644)
	os.WriteFile(exe, []byte("one"), 0o755)
	var m maker
	p := newPool(t, Options{})
	p.Watch(lock)
	s := m.spec("k")
	s.Files = []string{exe}
	mustLease(t, p, s).Close()
	if b := mustLease(t, p, s); idOf(t, b) != 1 {
		t.Fatal("an unchanged member was not reused")
	} else {
		b.Close()
	}
	os.WriteFile(lock, []byte(`{"v":2}`), 0o644)
	b := mustLease(t, p, s)
	if idOf(t, b) != 2 || m.made[0].closed.Load() != 1 {
		t.Fatalf("a member made before halo.lock changed served a run, or was not stopped")
	}
	// The member's own file is replaced (same size, new inode) while a run uses it.
	os.Remove(exe)
	os.WriteFile(exe, []byte("two"), 0o755)
	c := mustLease(t, p, s)
	if idOf(t, c) != 3 {
		t.Fatal("a member whose executable changed served a new run")
	}
	b.Close()
	if m.made[1].closed.Load() != 1 {
		t.Fatal("a retired member in use was not stopped when its run ended")
	}
	c.Close()
	// A file that did not exist and appears counts as a change.
	later := filepath.Join(dir, "later.halo")
	q := newPool(t, Options{})
	q.Watch(later)
	mustLease(t, q, s).Close()
	os.WriteFile(later, []byte("x"), 0o644)
	if d := mustLease(t, q, s); idOf(t, d) != 5 {
		t.Error("a file that appeared did not retire the member")
	}
}

// Close stops every member, leased or idle; a lease after it fails with a coded error.
func TestCloseStopsEverything(t *testing.T) {
	var m maker
	p := New(Options{})
	busy := mustLease(t, p, m.spec("a"))
	mustLease(t, p, m.spec("b")).Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for i, r := range m.made {
		if r.closed.Load() != 1 {
			t.Errorf("member %d was not stopped once by Close (%d)", i+1, r.closed.Load())
		}
	}
	busy.Close() // a run that ends after Close stops nothing twice
	if m.made[0].closed.Load() != 1 {
		t.Errorf("a member was stopped twice")
	}
	if _, err := p.Lease(m.spec("a")); errcode.Code(err) != tool.CodeToolError {
		t.Errorf("lease after Close: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// Without a pool each lease has a member of its own, stopped with it; a failure to make
// the lease's provider stops what was made.
func TestNilPoolAndFailures(t *testing.T) {
	var m maker
	var p *Pool
	a := mustLease(t, p, m.spec("k"))
	b := mustLease(t, p, m.spec("k"))
	if idOf(t, a) == idOf(t, b) {
		t.Fatal("a nil pool shared a member")
	}
	a.Close()
	if m.made[0].closed.Load() != 1 {
		t.Fatal("a nil pool's lease did not stop its member")
	}
	b.Close()
	bad := m.spec("k")
	boom := errors.New("boom")
	bad.Provider = func(Resource) (tool.Provider, error) { return nil, boom }
	for _, pl := range []*Pool{nil, newPool(t, Options{IdleTimeout: -1})} {
		before := m.count()
		if _, err := pl.Lease(bad); !errors.Is(err, boom) {
			t.Fatalf("lease: %v", err)
		}
		if r := m.made[before]; r.closed.Load() != 1 {
			t.Errorf("a failed lease left its member running")
		}
	}
}

// The leases of one opening (one tool.Batch: the tools a run offers) look at the watched
// files once between them; the next opening looks again, so a halo.lock changed between two
// runs retires the member the first run used, as it does for leases without a batch.
func TestBatchLooksAtWatchedFilesOnce(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "halo.lock")
	os.WriteFile(lock, []byte(`{"v":1}`), 0o644)
	var m maker
	p := newPool(t, Options{})
	p.Watch(lock)
	a, b := m.spec("a"), m.spec("b")
	mustLease(t, p, a).Close()
	mustLease(t, p, b).Close()
	run := &tool.Batch{}
	a.Batch, b.Batch = run, run
	la := mustLease(t, p, a)
	// Changed between two leases of one opening: the opening's look at it stands.
	os.WriteFile(lock, []byte(`{"v":2}`), 0o644)
	lb := mustLease(t, p, b)
	if idOf(t, la) != 1 || idOf(t, lb) != 2 {
		t.Fatalf("the opening's leases got members %d and %d, want the kept 1 and 2", idOf(t, la), idOf(t, lb))
	}
	la.Close()
	lb.Close()
	next := &tool.Batch{}
	a.Batch, b.Batch = next, next
	if la, lb = mustLease(t, p, a), mustLease(t, p, b); idOf(t, la) != 3 || idOf(t, lb) != 4 {
		t.Errorf("the next opening, after halo.lock changed: members %d and %d, want new ones 3 and 4", idOf(t, la), idOf(t, lb))
	}
	if m.made[0].closed.Load() != 1 || m.made[1].closed.Load() != 1 {
		t.Error("the members made before halo.lock changed were not stopped")
	}
}
