package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// How event streams behave: a comment every keepAlive keeps proxies from closing an idle
// stream; a client that does not take an event within writeTimeout is dropped; a run that
// runs in another process is looked at every poll even without a note.
const (
	keepAlive    = 15 * time.Second
	writeTimeout = 10 * time.Second
	poll         = 2 * time.Second
)

// A wireEvent is an event as the API shows it: its number in the run (the SSE id), the
// event's fields, and for a paused event the approval link that answers it.
type wireEvent struct {
	Seq int `json:"seq"`
	runtime.Event
	Link        string    `json:"link,omitempty"`
	LinkExpires time.Time `json:"linkExpires,omitzero"`
}

func (s *Server) wire(id string, seq int, e runtime.Event) wireEvent {
	w := wireEvent{Seq: seq, Event: e}
	if e.Type == "paused" {
		l := s.links.linkAt(id, seq, e)
		w.Link, w.LinkExpires = s.links.url(l), time.Unix(l.Expires, 0).UTC()
	}
	return w
}

// eventsAfter returns run id's events after number after, and whether the run has stopped
// for good (completed or failed), from this process when it runs here, else from the store.
func (s *Server) eventsAfter(r *http.Request, id string, after int) ([]runtime.Event, bool, error) {
	if lr := s.liveRun(id); lr != nil {
		if evs, ok := lr.after(after); ok {
			return evs, false, nil
		}
	}
	evs, st, err := s.store.Events(r.Context(), id, after)
	if err != nil {
		return nil, false, err
	}
	return evs, st == runtime.Completed || st == runtime.Failed, nil
}

// events is GET /api/runs/{id}/events: the run's events as a JSON list, or as server-sent
// events with Accept: text/event-stream, live until the run completes or fails, resumed
// after Last-Event-ID (or ?after=N).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	after, err := afterOf(r)
	if err != nil {
		return err
	}
	if _, err := s.load(id); err != nil {
		return err
	}
	if !wantsStream(r) {
		evs, _, err := s.eventsAfter(r, id, after)
		if err != nil {
			return err
		}
		out := make([]wireEvent, len(evs))
		for i, e := range evs {
			out[i] = s.wire(id, after+i+1, e)
		}
		writeJSON(w, http.StatusOK, map[string]any{"events": out})
		return nil
	}
	return s.stream(w, r, id, after)
}

func afterOf(r *http.Request) (int, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("Last-Event-ID %q: want the number of an event", trunc(v, 40))}
	}
	return n, nil
}

func wantsStream(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
			return true
		}
	}
	return false
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, id string, after int) error {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 16<<10)
	send := func() error {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	fmt.Fprintf(bw, "retry: 2000\n\n")
	if err := send(); err != nil {
		return nil
	}
	ka := time.NewTicker(keepAlive)
	defer ka.Stop()
	for {
		woken := s.pokes.wait(id)
		evs, over, err := s.eventsAfter(r, id, after)
		if err != nil {
			fmt.Fprintf(bw, "event: error\ndata: %s\n\n", mustJSON(map[string]string{"code": errorOf(err).code, "message": err.Error()}))
			send()
			return nil
		}
		for _, e := range evs {
			after++
			b, _ := json.Marshal(s.wire(id, after, e))
			fmt.Fprintf(bw, "id: %d\nevent: %s\ndata: %s\n\n", after, sseName(e.Type), b)
		}
		if len(evs) > 0 {
			if err := send(); err != nil {
				return nil // the client does not take its events: drop it
			}
		}
		if over {
			return nil
		}
		var tick <-chan time.Time
		if s.liveRun(id) == nil {
			t := time.NewTimer(poll)
			defer t.Stop()
			tick = t.C
		}
		select {
		case <-woken:
		case <-tick:
		case <-ka.C:
			fmt.Fprintf(bw, ": keep-alive\n\n")
			if err := send(); err != nil {
				return nil
			}
		case <-r.Context().Done():
			return nil
		case <-s.streamCtx.Done():
			return nil
		}
	}
}

// sseName keeps an event type to the characters an SSE field may hold.
func sseName(t string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ':' {
			return -1
		}
		return r
	}, t)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// listGap is the least time between two changed events of the runs list's stream: a run
// makes many events a second, and a client reads the list again at each one.
const listGap = 250 * time.Millisecond

// listChanges is GET /api/runs with Accept: text/event-stream: a changed event each time a
// run starts, pauses, is answered or stops, at most every listGap, for the client to read the
// list again. Runs of other processes sharing the store are seen by
// looking at the newest page of the list every poll.
func (s *Server) listChanges(w http.ResponseWriter, r *http.Request) error {
	look := func() (string, error) {
		page, err := s.store.List(r.Context(), runstore.Query{Limit: 50})
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, sm := range page.Runs {
			fmt.Fprintf(&b, "%s %s %s\n", sm.RunID, sm.Status, sm.Updated.Format(time.RFC3339Nano))
		}
		return b.String(), nil
	}
	// Taken before the first look, and the answer begun after it: a change from the moment the
	// client sees the stream begin is one it is told of.
	woken := s.pokes.waitAny()
	seen, err := look()
	if err != nil {
		return err
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	send := func(msg string) bool {
		rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := io.WriteString(w, msg); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send("retry: 2000\n\n") {
		return nil
	}
	ka := time.NewTicker(keepAlive)
	defer ka.Stop()
	tick := time.NewTicker(s.listPoll)
	defer tick.Stop()
	for {
		changed := false
		select {
		case <-woken:
			woken = s.pokes.waitAny() // taken before the event: no change is missed
			changed = true
		case <-tick.C:
			now, err := look()
			if err != nil {
				send(fmt.Sprintf("event: error\ndata: %s\n\n", mustJSON(map[string]string{"code": errorOf(err).code, "message": err.Error()})))
				return nil
			}
			changed, seen = now != seen, now
		case <-ka.C:
			if !send(": keep-alive\n\n") {
				return nil
			}
		case <-r.Context().Done():
			return nil
		case <-s.streamCtx.Done():
			return nil
		}
		if !changed {
			continue
		}
		if !send("event: changed\ndata: {}\n\n") {
			return nil // the client does not take its events: drop it
		}
		gap := time.NewTimer(listGap)
		select {
		case <-gap.C:
		case <-r.Context().Done():
			gap.Stop()
			return nil
		case <-s.streamCtx.Done():
			gap.Stop()
			return nil
		}
	}
}
