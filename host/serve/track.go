package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Why a run's context ends, beside the client or the runtime: the run is cancelled (the
// API, another replica), or interrupted (the server stops and the grace ran out).
var (
	errCancelled   = errors.New("the run was cancelled")
	errInterrupted = errors.New("halo serve stopped before the run finished")
	errLeaseLost   = errors.New("this server could not renew its hold on the run in the store")
)

// CodeInterrupted is the code of a run that was still running when the server stopped and
// its grace period ran out.
const CodeInterrupted = "INTERRUPTED"

// A liveRun is a run this process is running now: its events so far (for streams) and how
// to cancel it.
type liveRun struct {
	id       string
	pipeline string
	cancel   context.CancelCauseFunc
	ctx      context.Context
	stopped  chan struct{}

	// end is held while the run's last record is saved, and ended is set before it is let
	// go: a cancel takes end too, so it never cancels (and answers 202 for) a run whose
	// record already says it stopped.
	end   sync.Mutex
	ended bool

	mu     sync.Mutex
	events []runtime.Event
	// buf, when set, is the server's recycled room for a new run's first events (see
	// eventBuf), which events starts in; Save hands it back once the run is no longer live.
	buf *eventBuf
	// kept is how many events the run has made here, and gone is set once they are no longer
	// kept (the run's record is saved and holds them).
	kept int
	gone bool
	// mark is when the stage before ended (or the run began), for the stage histogram.
	mark time.Time
}

// firstEvents is the room for a new run's first events: a one-stage run makes three, and an
// event is half a kilobyte.
const firstEvents = 4

// An eventBuf is the room for a live run's first events. The server recycles them (an
// event is half a kilobyte: the buffer was a sixth of what a call to /mcp allocated), which
// is safe because no one holds a live run's events but the live run: readers get copies.
type eventBuf [firstEvents]runtime.Event

// after returns the run's events after number n, and false once the run keeps them no
// longer: its saved record has them.
func (lr *liveRun) after(n int) ([]runtime.Event, bool) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if lr.gone {
		return nil, false
	}
	if n < 0 {
		n = 0
	}
	if n >= len(lr.events) {
		return nil, true
	}
	return append([]runtime.Event(nil), lr.events[n:]...), true
}

// count is how many events the run has made here.
func (lr *liveRun) count() int {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.kept
}

// release drops the run's events, its saved record holding them now, and returns its
// buffer to the server's.
func (lr *liveRun) release(s *Server) {
	lr.mu.Lock()
	buf := lr.buf
	lr.buf, lr.events, lr.gone = nil, nil, true
	lr.mu.Unlock()
	if buf != nil {
		*buf = eventBuf{} // nothing of the run is kept alive by the buffer
		s.eventBufs.Put(buf)
	}
}

// pokes wakes whoever waits for a run to change: a new event, a start, a stop, a note from
// another process. A waiter takes the channel before it looks, so no change is missed.
//
// A change nobody waits for takes no lock (a run makes several a call): waiting counts the
// channels handed out and not yet closed, and a poke that finds it zero returns. That misses
// no waiter: one counts itself before it looks at the run, and the change is made (under the
// lock the waiter looks under) before the poke reads the count, so either the poke sees the
// waiter or the waiter sees the change.
type pokes struct {
	mu sync.Mutex
	m  map[string]chan struct{}
	// any is closed at the next change of any run (the runs list's streams wait on it).
	any chan struct{}
	// waiting is how many channels m and any hold; changed with mu held.
	waiting atomic.Int32
}

// waitAny returns a channel closed at the next change of any run.
func (p *pokes) waitAny() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.any == nil {
		p.any = make(chan struct{})
		p.waiting.Add(1)
	}
	return p.any
}

// wakeAny, p.mu held, wakes the waiters for any change.
func (p *pokes) wakeAny() {
	if p.any != nil {
		close(p.any)
		p.any = nil
		p.waiting.Add(-1)
	}
}

func (p *pokes) wait(id string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch, ok := p.m[id]
	if !ok {
		ch = make(chan struct{})
		p.m[id] = ch
		p.waiting.Add(1)
	}
	return ch
}

// poke wakes the waiters for run id and for any change: the run started, paused, was
// answered or stopped, or another process says it changed.
func (p *pokes) poke(id string) {
	if p.waiting.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeRun(id)
	p.wakeAny()
}

// pokeEvent wakes the waiters for run id only: it made an event, which changes nothing the
// runs list shows.
func (p *pokes) pokeEvent(id string) {
	if p.waiting.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wakeRun(id)
}

// wakeRun, p.mu held, wakes the waiters for run id.
func (p *pokes) wakeRun(id string) {
	if ch, ok := p.m[id]; ok {
		close(ch)
		delete(p.m, id)
		p.waiting.Add(-1)
	}
}

func (p *pokes) pokeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ch := range p.m {
		close(ch)
		delete(p.m, id)
		p.waiting.Add(-1)
	}
	p.wakeAny()
}

// Context values by which the API tells the tracker about the run it asked for.
type (
	beganKey  struct{}
	signalKey struct{}
)

// withBegan asks Begin to send the run's id on ch once the run is held.
func withBegan(ctx context.Context, ch chan<- string) context.Context {
	return context.WithValue(ctx, beganKey{}, ch)
}

func withSignal(ctx context.Context, sig runstore.Signal) context.Context {
	return context.WithValue(ctx, signalKey{}, sig)
}

// A tracker is the runtime's store: the server's store, told as runs start, continue and
// stop, which keeps the process's live runs.
type tracker struct{ s *Server }

var _ runtime.Tracker = (*tracker)(nil)

func (t *tracker) Load(id string) (*runtime.Record, error) { return t.s.store.Load(id) }
func (t *tracker) Latest() (string, error)                 { return t.s.store.Latest() }
func (t *tracker) SealKey() ([]byte, error)                { return t.s.store.SealKey() }

// Begin holds the run in the store (a new run is started; a paused one claimed, which
// only one signal wins) and makes it live here.
func (t *tracker) Begin(ctx context.Context, rec *runtime.Record) (context.Context, error) {
	s := t.s
	// From the moment the store holds the run, another process may ask to cancel it: a
	// note that comes before the run is live here is kept in beginning, not lost.
	s.mu.Lock()
	s.beginning[rec.RunID] = false
	s.mu.Unlock()
	var err error
	if rec.Status == runtime.Running {
		err = s.store.Start(ctx, rec)
	} else {
		sig, _ := ctx.Value(signalKey{}).(runstore.Signal)
		if sig.Via == "" {
			sig.Via = "runtime"
		}
		err = s.store.Claim(ctx, rec, sig)
	}
	if err != nil {
		s.mu.Lock()
		delete(s.beginning, rec.RunID)
		s.mu.Unlock()
		return nil, err
	}
	rctx, cancel := context.WithCancelCause(ctx)
	lr := &liveRun{id: rec.RunID, pipeline: rec.Pipeline, cancel: cancel, ctx: rctx, stopped: make(chan struct{}),
		mark: s.now()}
	if len(rec.Events) == 0 {
		lr.buf, _ = s.eventBufs.Get().(*eventBuf)
		if lr.buf == nil {
			lr.buf = new(eventBuf)
		}
		lr.events = lr.buf[:0]
	} else {
		lr.events = make([]runtime.Event, len(rec.Events), len(rec.Events)+firstEvents)
		copy(lr.events, rec.Events)
	}
	lr.kept = len(lr.events)
	s.mu.Lock()
	cancelled := s.beginning[rec.RunID]
	delete(s.beginning, rec.RunID)
	s.live[rec.RunID] = lr
	s.mu.Unlock()
	if cancelled {
		cancel(errCancelled)
	}
	s.metrics.running.Inc()
	if ch, ok := ctx.Value(beganKey{}).(chan<- string); ok {
		select {
		case ch <- rec.RunID:
		default:
		}
	}
	s.pokes.poke(rec.RunID)
	return rctx, nil
}

// Save writes the record of a run that stopped; the run is no longer live here. A run
// cancelled because the server stopped is saved as interrupted.
func (t *tracker) Save(rec *runtime.Record) error {
	s := t.s
	s.mu.Lock()
	lr := s.live[rec.RunID]
	dropped := lr == nil && s.abandoned[rec.RunID]
	s.mu.Unlock()
	if dropped {
		return nil // saved as interrupted when the server stopped
	}
	if lr != nil && rec.Status == runtime.Failed && rec.Error != nil && errors.Is(context.Cause(lr.ctx), errInterrupted) {
		rec.Error = &runtime.ErrorInfo{Code: CodeInterrupted, Message: errInterrupted.Error() + " (its grace period ran out)", At: rec.Error.At}
		for i := range rec.Events {
			if e := &rec.Events[i]; e.Type == "run" && e.Status == runtime.Failed {
				e.Error = rec.Error
			}
		}
	}
	if lr != nil {
		lr.end.Lock()
	}
	err := s.store.Save(rec)
	if lr != nil {
		lr.ended = true
		lr.end.Unlock()
	}
	if err != nil {
		s.log.Error("saving a run record failed", "run", rec.RunID, "error", err)
	}
	owned := false
	if lr != nil {
		s.mu.Lock()
		if s.live[rec.RunID] == lr {
			delete(s.live, rec.RunID)
			owned = true
		}
		s.mu.Unlock()
	}
	if owned {
		lr.cancel(nil)
		if err == nil {
			// Readers read the saved record from now on (a reader that took the live run
			// before it stopped is told to: see after).
			lr.release(s)
		}
		close(lr.stopped)
		s.metrics.running.Dec()
	}
	s.metrics.stopped(rec.Pipeline, rec.Status)
	s.pokes.poke(rec.RunID)
	if err == nil && rec.Status == runtime.Paused && lr != nil {
		s.notify(rec)
	}
	return err
}

// onEvent keeps a live run's event for its streams and the store, and counts it.
func (s *Server) onEvent(e runtime.Event) {
	s.mu.Lock()
	lr := s.live[e.RunID]
	s.mu.Unlock()
	if lr == nil {
		return
	}
	lr.mu.Lock()
	if !lr.gone {
		lr.events = append(lr.events, e)
		lr.kept++
	}
	seq := lr.kept
	var stage time.Duration
	if e.Type == "stage" {
		stage = e.Time.Sub(lr.mark)
		lr.mark = e.Time
	}
	lr.mu.Unlock()
	if !s.localEvents {
		// A cancelled run still has events to keep (the last says it failed).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := s.store.AppendEvent(ctx, e.RunID, seq, e); err != nil {
			s.log.Warn("keeping a live event in the store failed", "run", e.RunID, "error", err)
		}
		cancel()
	}
	s.metrics.event(lr.pipeline, e, stage)
	// Wakes the streams that wait for this run, when there are any.
	s.pokes.pokeEvent(e.RunID)
}

// A localStore keeps no live events for other processes: the one process that runs a run
// serves its events (the embedded SQLite store). The server then does not hand it each event.
type localStore interface{ LocalEvents() bool }

// cancelLocal cancels run id if it runs here: false when it does not, or once the record
// that says it stopped is saved (a cancel that comes during that save waits for it).
func (s *Server) cancelLocal(id string, why error) bool {
	s.mu.Lock()
	lr := s.live[id]
	s.mu.Unlock()
	if lr == nil {
		return false
	}
	lr.end.Lock()
	defer lr.end.Unlock()
	if lr.ended {
		return false
	}
	lr.cancel(why)
	return true
}

// cancelNoted cancels run id, which another process asked to cancel through the store, if
// it runs here or is being taken here (then as soon as it is live).
func (s *Server) cancelNoted(id string) {
	s.mu.Lock()
	if _, ok := s.beginning[id]; ok {
		s.beginning[id] = true
	}
	s.mu.Unlock()
	s.cancelLocal(id, errCancelled)
}

// recheckNow asks the lease loop to look for cancel requests now.
func (s *Server) recheckNow() {
	select {
	case s.recheck <- struct{}{}:
	default:
	}
}

// cancelAll cancels every run running here.
func (s *Server) cancelAll(why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lr := range s.live {
		lr.cancel(why)
	}
}

func (s *Server) liveRun(id string) *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[id]
}
