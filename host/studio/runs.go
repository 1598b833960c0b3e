package studio

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// listLimit is how many runs one page of the list shows.
const listLimit = 50

// A row is one run in the list.
type row struct {
	ID, Short, Pipeline, Status, Waiting string
	Started, Duration, Cost, Tokens      string
	Violations                           int
	ErrorCode                            string
	Paused                               bool
}

type listData struct {
	page
	// The filter, as the address holds it: Q the search words, Since and Until dates
	// (YYYY-MM-DD, Until included), MinCost dollars.
	Q, Status, Pipeline, Since, Until, MinCost, Cursor string
	Violations                                         bool
	// Filtered says a filter is set.
	Filtered  bool
	Statuses  []string
	Pipelines []pipelineInfo
	Rows      []row
	// Total is what the rows shown cost together ("—" or "≥ …" when a price is unknown),
	// Tokens the tokens they read and wrote.
	Total, Tokens string
	Next          string
	// PausedCount is how many runs wait for someone (PausedMore: at least that many).
	PausedCount int
	PausedMore  bool
	// Live says the list follows changes (the first page only).
	Live      bool
	LiveQuery string
}

var statuses = []string{"running", "paused", "completed", "failed"}

// filterKeys are the runs list's filters in its address, as the form names them.
var filterKeys = []string{"q", "status", "pipeline", "since", "until", "violations", "mincost"}

// dateLayout is how the list's time range is written: the form's date fields.
const dateLayout = "2006-01-02"

// listQuery turns the list's address into the API's query: dates become the times from the
// start of since (UTC) to the end of until, the rest as they are. A bad date or cost is
// refused before anything is asked.
func listQuery(q url.Values) (url.Values, *apiError) {
	aq := url.Values{}
	for _, k := range []string{"q", "status", "pipeline", "cursor"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			aq.Set(k, v)
		}
	}
	for _, f := range []struct {
		name string
		days int
	}{{"since", 0}, {"until", 1}} {
		v := strings.TrimSpace(q.Get(f.name))
		if v == "" {
			continue
		}
		t, err := time.Parse(dateLayout, v)
		if err != nil {
			return nil, &apiError{http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("%s %q is not a date: write it as 2026-12-01.", f.name, trim(v, 40))}
		}
		aq.Set(f.name, t.AddDate(0, 0, f.days).Format(time.RFC3339))
	}
	if q.Get("violations") != "" {
		aq.Set("violations", "true")
	}
	if v := strings.TrimPrefix(strings.TrimSpace(q.Get("mincost")), "$"); v != "" {
		if c, err := strconv.ParseFloat(v, 64); err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return nil, &apiError{http.StatusBadRequest, "BAD_REQUEST", fmt.Sprintf("a cost above %q: write dollars, such as 0.05.", trim(v, 40))}
		}
		aq.Set("minCost", v)
	}
	return aq, nil
}

// list gathers a page of the runs list from the API; the live stream, which renders only
// the rows, leaves the pipelines out.
func (s *Studio) list(r *http.Request, c caller, withPipelines bool) (listData, *apiError) {
	q := r.URL.Query()
	d := listData{page: page{Title: "Runs", Nav: "runs"}, Q: q.Get("q"), Status: q.Get("status"), Pipeline: q.Get("pipeline"),
		Since: q.Get("since"), Until: q.Get("until"), MinCost: q.Get("mincost"), Violations: q.Get("violations") != "",
		Cursor: q.Get("cursor"), Statuses: statuses}
	aq, aerr := listQuery(q)
	if aerr != nil {
		return d, aerr
	}
	aq.Set("limit", fmt.Sprint(listLimit))
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
	var total float64
	var in, out int64
	unknown := false
	for _, sm := range runs.Runs {
		rw := row{ID: sm.RunID, Short: shortID(sm.RunID), Pipeline: sm.Pipeline, Status: sm.Status, Waiting: sm.Waiting,
			Started: clock(sm.Started), Cost: costOf(sm.Cost, sm.Unpriced), Tokens: tokenCount(sm.TokensIn, sm.TokensOut),
			Violations: sm.Violations, Paused: sm.Status == "paused"}
		total += sm.Cost
		in, out, unknown = in+sm.TokensIn, out+sm.TokensOut, unknown || sm.Unpriced
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
	d.Total, d.Tokens = costOf(total, unknown), tokenCount(in, out)
	// The filter, as the address keeps it: for the next page and the live list.
	fq := url.Values{}
	for _, k := range filterKeys {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			fq.Set(k, v)
		}
	}
	d.Filtered = len(fq) > 0
	if runs.Next != "" {
		nq := url.Values{"cursor": {runs.Next}}
		for k, v := range fq {
			nq[k] = v
		}
		d.Next = "/?" + nq.Encode()
	}
	if d.Cursor == "" {
		d.Live = true
		d.LiveQuery = fq.Encode()
	}
	return d, nil
}

// tokenCount shows a list row's tokens: "1200 in, 345 out", or "" for a run without
// model calls.
func tokenCount(in, out int64) string {
	if in == 0 && out == 0 {
		return ""
	}
	return fmt.Sprintf("%d in, %d out", in, out)
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
