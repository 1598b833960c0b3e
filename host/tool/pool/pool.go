// Package pool keeps tool providers' processes and connections between the runs that use
// them: a plugin process (Workspace, Bash, a module package) or an MCP server connection is
// kept under a key its opener computes from the declaration's resolved configuration (the
// provider, its options, the folders it is granted, its environment, the pinned sha256 of
// its executable), and a later run of a declaration with the same key gets the same process
// instead of a new one. Nothing is started here: a member is made lazily by its opener and
// starts on its first call, as it would unpooled.
//
// A member stops when it has been idle (no lease) for the pool's idle timeout, when a file
// it depends on changed (Watch: the program's .halo files and halo.lock; Spec.Files: a
// package's executable), when the lease that ends says it may not serve another run
// (Spec.Reusable: a Bash plugin that left a process running, a provider that asks for a
// process per run), and when the pool closes. A member that crashed restarts on its next
// call, which its own provider does.
//
// A member serves either one lease at a time (plugins: a run has a process to itself, and
// its grants are its declaration's alone) or, when Spec.Shared is set, every lease at once
// (MCP connections, one per declaration). Commands that serve many runs (halo serve, halo
// mcp) make one Pool and close it when they stop; cmd/halo/internal/providers hands it to
// the openers.
package pool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/tool"
)

// DefaultIdleTimeout is how long an unused member is kept when Options.IdleTimeout is zero.
const DefaultIdleTimeout = 5 * time.Minute

// Options tune a Pool.
type Options struct {
	// IdleTimeout is how long a member no run uses is kept; 0 means DefaultIdleTimeout, and a
	// negative value stops each member as soon as its last lease ends (a process per run).
	IdleTimeout time.Duration
	// Now reads the clock; nil means time.Now.
	Now func() time.Time
	// Logger hears when members start, stop and why; nil discards it.
	Logger hclog.Logger
}

// A Resource is what a member keeps: a plugin client, an MCP connection. Close stops it and
// waits for what it started.
type Resource interface{ Close() error }

// A Spec says how to lease one declaration's member.
type Spec struct {
	// Key identifies the member: two declarations with equal keys share it. It must hold
	// everything that decides what the process may do (see the package doc).
	Key string
	// Name names the member in logs ("Bash", "MCP tool Git").
	Name string
	// Shared members serve every lease at once; others serve one lease at a time, and a
	// second run of the same key at the same time gets a member of its own.
	Shared bool
	// Files are files besides the pool's watched ones whose change retires the member.
	Files []string
	// New makes the member's resource. It starts nothing.
	New func() (Resource, error)
	// Provider is the lease's provider on the resource: what the run calls. Its Close ends
	// the run's use (a plugin's Release of the declaration), not the resource.
	Provider func(r Resource) (tool.Provider, error)
	// Reusable, when not nil, is asked as a lease ends whether the resource may serve another
	// lease; false stops it.
	Reusable func(r Resource) bool
	// Batch, when not nil, is the opening this lease is part of (tool.Declaration.Batch): the
	// pool's watched files are looked at once for all of its leases, not once a lease.
	Batch *tool.Batch
}

// A Pool keeps members by key. It is safe for concurrent use. The zero Pool is not usable:
// make one with New. A nil *Pool leases without keeping anything: every lease gets a member
// of its own, stopped when the lease ends (what halo run and halo test do).
type Pool struct {
	opts Options
	log  hclog.Logger

	mu      sync.Mutex
	members map[string][]*member
	watched []fileStamp
	closed  bool

	stop chan struct{}
	done chan struct{}
}

// A member is one resource and the leases it serves.
type member struct {
	key     string
	name    string
	res     Resource
	files   []fileStamp
	shared  bool
	leases  int
	idle    time.Time // when its last lease ended
	retired bool      // no new lease; stopped when its last lease ends
	gone    bool      // taken out of the pool and stopped (or being stopped)
}

// New makes a pool and starts the goroutine that stops idle members; Close stops it.
func New(opts Options) *Pool {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	p := &Pool{opts: opts, log: log, members: map[string][]*member{}, stop: make(chan struct{}), done: make(chan struct{})}
	go p.sweeper()
	return p
}

// Watch adds files whose change retires every member made before it: the program's .halo
// files and halo.lock. A file that does not exist yet is watched for appearing.
func (p *Pool) Watch(paths ...string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, path := range paths {
		p.watched = append(p.watched, stamp(path))
	}
}

// Lease returns the provider of a member for s: an idle member of s.Key that still matches
// its files, or a new one. Closing the provider ends the lease.
func (p *Pool) Lease(s Spec) (tool.Provider, error) {
	if p == nil {
		res, err := s.New()
		if err != nil {
			return nil, err
		}
		prov, err := s.Provider(res)
		if err != nil {
			res.Close()
			return nil, err
		}
		return &lease{Provider: prov, release: func() error { return res.Close() }}, nil
	}
	m, stale, err := p.take(s)
	p.stopAll(stale, "its files changed")
	if err != nil {
		return nil, err
	}
	prov, err := s.Provider(m.res)
	if err != nil {
		p.release(m, false)
		return nil, err
	}
	return &lease{Provider: prov, release: func() error {
		ok := s.Reusable == nil || s.Reusable(m.res)
		p.release(m, ok)
		return nil
	}}, nil
}

// take finds or makes the member of a lease, and returns the idle members of the key found
// stale on the way, for the caller to stop.
func (p *Pool) take(s Spec) (*member, []*member, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, nil, tool.Errorf(tool.CodeToolError, "%s: the host is shutting down", s.Name)
	}
	var stale []*member
	keep := p.members[s.Key][:0]
	var found *member
	var now map[string]fileStamp // the watched files as they are, looked at once for s.Batch
	if len(p.watched) > 0 && len(p.members[s.Key]) > 0 {
		v, _ := s.Batch.Do(watchedKey{p}, func() (any, error) {
			out := make(map[string]fileStamp, len(p.watched))
			for _, w := range p.watched {
				out[w.path] = stamp(w.path)
			}
			return out, nil
		})
		now = v.(map[string]fileStamp)
	}
	for _, m := range p.members[s.Key] {
		if !m.retired && p.changed(m, now) {
			m.retired = true
			p.log.Debug("files changed; the tool's process is stopped", "tool", m.name)
		}
		if m.retired {
			if m.leases == 0 {
				m.gone = true
				stale = append(stale, m)
				continue
			}
		} else if found == nil && (m.leases == 0 || m.shared) {
			found = m
		}
		keep = append(keep, m)
	}
	p.members[s.Key] = keep
	if found == nil {
		res, err := s.New()
		if err != nil {
			return nil, stale, err
		}
		found = &member{key: s.Key, name: s.Name, res: res, shared: s.Shared, files: p.stamps(s.Files)}
		p.members[s.Key] = append(p.members[s.Key], found)
	}
	found.leases++
	return found, stale, nil
}

// release ends one lease of m. A member that may not serve another lease, or that was
// retired, is stopped once no lease uses it.
func (p *Pool) release(m *member, reusable bool) {
	p.mu.Lock()
	m.leases--
	if !reusable {
		m.retired = true
	}
	stop := m.leases == 0 && !m.gone && (m.retired || p.opts.IdleTimeout < 0)
	if stop {
		p.remove(m)
	} else if m.leases == 0 {
		m.idle = p.opts.Now()
	}
	p.mu.Unlock()
	if stop {
		p.stopAll([]*member{m}, "its run ended")
	}
}

// remove takes m out of the pool, for the caller to stop; p.mu is held.
func (p *Pool) remove(m *member) {
	m.gone = true
	list := p.members[m.key]
	for i, x := range list {
		if x == m {
			p.members[m.key] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(p.members[m.key]) == 0 {
		delete(p.members, m.key)
	}
}

// Sweep stops the members idle for longer than the idle timeout, and the idle ones whose
// files changed. The pool's own goroutine calls it; tests call it with their clock.
func (p *Pool) Sweep() {
	now := p.opts.Now()
	var stale []*member
	p.mu.Lock()
	for _, list := range p.members {
		for _, m := range list {
			if m.leases == 0 && (now.Sub(m.idle) >= p.opts.IdleTimeout || m.retired || p.changed(m, nil)) {
				stale = append(stale, m)
			}
		}
	}
	for _, m := range stale {
		p.remove(m)
	}
	p.mu.Unlock()
	p.stopAll(stale, "it was idle or its files changed")
}

// Len returns how many members the pool holds (tests, halo serve's log).
func (p *Pool) Len() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, list := range p.members {
		n += len(list)
	}
	return n
}

// Close stops every member, leased or not, and the goroutine that stops idle ones; a lease
// after Close fails, and one that ends after it stops nothing more. It waits for the
// processes to stop.
func (p *Pool) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var all []*member
	for _, list := range p.members {
		for _, m := range list {
			m.gone = true
			all = append(all, m)
		}
	}
	p.members = map[string][]*member{}
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	return p.stopAll(all, "the host is stopping")
}

// stopAll stops members, each in its own goroutine (a plugin takes up to two seconds to stop
// gracefully), and waits for them.
func (p *Pool) stopAll(ms []*member, why string) error {
	if len(ms) == 0 {
		return nil
	}
	errs := make([]error, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Go(func() {
			p.log.Debug("stopping a pooled tool process", "tool", m.name, "why", why)
			if err := m.res.Close(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", m.name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sweeper calls Sweep a few times per idle timeout until Close.
func (p *Pool) sweeper() {
	defer close(p.done)
	every := p.opts.IdleTimeout / 4
	if every <= 0 || every > time.Minute {
		every = time.Minute
	}
	every = max(every, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.Sweep()
		}
	}
}

// A lease is a run's use of a member.
type lease struct {
	tool.Provider
	once    sync.Once
	release func() error
	err     error
}

// Close ends the run's use of the member: the declaration's provider is closed, the member
// kept for the next lease or stopped.
func (l *lease) Close() error {
	l.once.Do(func() { l.err = errors.Join(l.Provider.Close(), l.release()) })
	return l.err
}

// Unwrap returns the member's provider (tests, halo tools: its PID).
func (l *lease) Unwrap() tool.Provider { return l.Provider }

// A fileStamp is what a file looked like: a change of any of it retires the members that
// depend on it.
type fileStamp struct {
	path   string
	exists bool
	size   int64
	mod    time.Time
	mode   os.FileMode
	id     fileID
}

func stamp(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{path: path}
	}
	return fileStamp{path: path, exists: true, size: st.Size(), mod: st.ModTime(), mode: st.Mode(), id: inode(st)}
}

// stamps stamps the pool's watched files and extra; p.mu is held.
func (p *Pool) stamps(extra []string) []fileStamp {
	out := make([]fileStamp, 0, len(p.watched)+len(extra))
	for _, w := range p.watched {
		out = append(out, stamp(w.path))
	}
	for _, f := range extra {
		out = append(out, stamp(f))
	}
	return out
}

// watchedKey names, in a tool.Batch, pool p's watched files as they are.
type watchedKey struct{ p *Pool }

// changed reports whether a file m depends on is not what it was when m was made: each
// looked at now, or found in now (the watched files, looked at for the lease's batch).
func (p *Pool) changed(m *member, now map[string]fileStamp) bool {
	for _, f := range m.files {
		cur, ok := now[f.path]
		if !ok {
			cur = stamp(f.path)
		}
		if cur != f {
			return true
		}
	}
	return false
}

// Key makes a member's key from what decides what its process may do: kind names the sort of
// member ("bash", "module", "mcp"), parts are encoded as JSON (maps with their keys sorted)
// and hashed, so a key holds no secret in clear.
func Key(kind string, parts ...any) (string, error) {
	doc, err := json.Marshal(parts)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(doc)
	return kind + ":" + hex.EncodeToString(sum[:]), nil
}

// Env is a key part for the variables names, read with getenv: each name with whether it is
// set and a digest of its value, so a process is never reused for a declaration that would
// see other values.
func Env(names []string, getenv func(string) (string, bool)) []string {
	out := make([]string, 0, len(names))
	for _, name := range names {
		v, ok := "", false
		if getenv != nil {
			v, ok = getenv(name)
		}
		sum := sha256.Sum256([]byte(v))
		out = append(out, fmt.Sprintf("%s=%t:%x", name, ok, sum[:8]))
	}
	return out
}
