package studio

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// listLimit is how many runs one page of the list shows.
const listLimit = 50

// A row is one run in the list.
type row struct {
	ID, Short, Pipeline, Status, Waiting string
	Started, Duration, Cost              string
	Violations                           int
	ErrorCode                            string
	Paused                               bool
}

type listData struct {
	page
	Status, Pipeline, Cursor string
	Statuses                 []string
	Pipelines                []pipelineInfo
	Rows                     []row
	Next                     string
	// PausedCount is how many runs wait for someone (PausedMore: at least that many).
	PausedCount int
	PausedMore  bool
	// Live says the list follows changes (the first page only).
	Live      bool
	LiveQuery string
}

var statuses = []string{"running", "paused", "completed", "failed"}

// list gathers a page of the runs list from the API; the live stream, which renders only
// the rows, leaves the pipelines out.
func (s *Studio) list(r *http.Request, c caller, withPipelines bool) (listData, *apiError) {
	q := r.URL.Query()
	d := listData{page: page{Title: "Runs", Nav: "runs"}, Status: q.Get("status"), Pipeline: q.Get("pipeline"), Cursor: q.Get("cursor"), Statuses: statuses}
	aq := url.Values{"limit": {fmt.Sprint(listLimit)}}
	for _, k := range []string{"status", "pipeline", "cursor"} {
		if v := q.Get(k); v != "" {
			aq.Set(k, v)
		}
	}
	var runs runPage
	if err := c.call("GET", "/api/runs?"+aq.Encode(), nil, &runs); err != nil {
		return d, err
	}
	if withPipelines {
		pl, err := s.pipelines(c)
		if err != nil {
			return d, err
		}
		d.Pipelines = pl
	}
	var paused runPage
	if err := c.call("GET", "/api/runs?status=paused&limit=500", nil, &paused); err != nil {
		return d, err
	}
	d.PausedCount, d.PausedMore = len(paused.Runs), paused.Next != ""
	now := s.cfg.Now()
	for _, sm := range runs.Runs {
		rw := row{ID: sm.RunID, Short: shortID(sm.RunID), Pipeline: sm.Pipeline, Status: sm.Status, Waiting: sm.Waiting,
			Started: clock(sm.Started), Cost: money(sm.Cost), Violations: sm.Violations, Paused: sm.Status == "paused"}
		end := sm.Updated
		if sm.Status == "running" {
			end = now
		}
		if !sm.Started.IsZero() && end.After(sm.Started) {
			rw.Duration = durationOf(end.Sub(sm.Started))
		}
		if sm.Error != nil {
			rw.ErrorCode = sm.Error.Code
		}
		d.Rows = append(d.Rows, rw)
	}
	if runs.Next != "" {
		nq := url.Values{"cursor": {runs.Next}}
		if d.Status != "" {
			nq.Set("status", d.Status)
		}
		if d.Pipeline != "" {
			nq.Set("pipeline", d.Pipeline)
		}
		d.Next = "/?" + nq.Encode()
	}
	if d.Cursor == "" {
		d.Live = true
		lq := url.Values{}
		if d.Status != "" {
			lq.Set("status", d.Status)
		}
		if d.Pipeline != "" {
			lq.Set("pipeline", d.Pipeline)
		}
		d.LiveQuery = lq.Encode()
	}
	return d, nil
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func (s *Studio) listPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.list(r, s.caller(r), true)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	s.render(w, r, http.StatusOK, "runs", &d)
}

// liveList is the runs list's live stream (server-sent events): the list's rows again,
// rendered, each time they change. It follows the API's stream of the list's changes, and
// reads the list again every ListInterval besides (a running run's duration grows), for as
// long as the page is open and the server runs.
func (s *Studio) liveList(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	if _, err := s.list(r, c, false); err != nil {
		s.problem(w, r, err)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	changes, wait := c.listChanges(ctx)
	defer wait()
	defer cancel()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send([]byte("retry: 3000\n\n")) {
		return
	}
	var last []byte
	t := time.NewTicker(s.cfg.ListInterval)
	defer t.Stop()
	ka := time.NewTicker(keepAlive)
	defer ka.Stop()
	for {
		d, err := s.list(r, c, false)
		var msg []byte
		if err != nil {
			msg = sse("problem", err.Error())
		} else {
			var buf bytes.Buffer
			if err := s.pages["runs"].ExecuteTemplate(&buf, "rows", d); err == nil && !bytes.Equal(buf.Bytes(), last) {
				last = append(last[:0], buf.Bytes()...)
				msg = sse("runs", buf.String())
			}
		}
		if msg != nil && !send(msg) {
			return
		}
		if err != nil {
			return
		}
		for idle := true; idle; {
			select {
			case _, ok := <-changes:
				idle = false
				if !ok {
					changes = nil // the API's stream ended: the ticker goes on
				}
			case <-t.C:
				idle = false
			case <-ka.C:
				if !send([]byte(": keep-alive\n\n")) {
					return
				}
			case <-r.Context().Done():
				return
			case <-s.cfg.Stopping:
				return
			}
		}
	}
}

// keepAlive is how long the runs list's stream stays silent at most: proxies drop
// connections that say nothing for long.
const keepAlive = 15 * time.Second

// sse makes one server-sent event; each line of data is its own data: field.
func sse(name, data string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "event: %s\n", name)
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r", ""), "\n") {
		fmt.Fprintf(&b, "data: %s\n", line)
	}
	b.WriteString("\n")
	return b.Bytes()
}
