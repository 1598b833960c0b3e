package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/telemetry"
)

// withLiveEvents returns rec with the events it has so far: a running run's record holds
// none of those made since it started.
func (s *Server) withLiveEvents(r *http.Request, rec *runtime.Record) (*runtime.Record, error) {
	if rec.Status != runtime.Running {
		return rec, nil
	}
	evs, _, err := s.eventsAfter(r, rec.RunID, 0)
	if err != nil {
		return nil, err
	}
	cp := *rec
	cp.Events = evs
	return &cp, nil
}

// trace is GET /api/runs/{id}/trace: the run's trace, made from its record, as OTLP JSON.
func (s *Server) trace(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.load(r.PathValue("id"))
	if err != nil {
		return err
	}
	if rec, err = s.withLiveEvents(r, rec); err != nil {
		return err
	}
	b, err := telemetry.TraceJSON(r.Context(), rec, telemetry.ExportConfig{ServiceVersion: s.cfg.Version, Content: true})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.Write(b)
	return nil
}

// A sourceView is GET /api/source: one file of the served program.
type sourceView struct {
	File string `json:"file"`
	Text string `json:"text"`
}

// source is GET /api/source?file=NAME: the text of a .halo file the server serves (a name as
// GET /api/pipelines and events' at give it). Only the program's own files are given.
func (s *Server) source(w http.ResponseWriter, r *http.Request) error {
	name := r.URL.Query().Get("file")
	src, ok := s.cfg.Program.Source(name)
	if name == "" || !ok {
		return &apiError{http.StatusNotFound, CodeNotFound, fmt.Sprintf("no file %q among the files this server serves", trunc(name, 200))}
	}
	writeJSON(w, http.StatusOK, sourceView{File: name, Text: string(src)})
	return nil
}

// maxReplays is how many replays run at once in one process; more are TOO_MANY_RUNS.
const maxReplays = 4

// replayTimeout bounds one replay: it asks no model and runs no tool, so it is quick.
const replayTimeout = time.Minute

// A replayView is POST /api/runs/{id}/replay's answer: how the run goes when its pipeline
// runs again as today's files declare it, every call answered from the run's recording.
type replayView struct {
	RunID  string             `json:"runId"`
	Status runtime.Status     `json:"status"`
	Output any                `json:"output"`
	Error  *runtime.ErrorInfo `json:"error,omitempty"`
	Meta   runtime.Meta       `json:"meta"`
	Events []wireEvent        `json:"events"`
	// Diverged is where the replay's events first differ from the run's; nil when they are
	// the same.
	Diverged *divergence `json:"diverged"`
}

// A divergence is the first place a replay's events differ from the recorded run's.
type divergence struct {
	// Seq is the number of the first event that differs, from 1, in both lists.
	Seq int `json:"seq"`
	// Recorded and Replayed are the two events there; one is nil when its list ended first.
	Recorded *wireEvent `json:"recorded"`
	Replayed *wireEvent `json:"replayed"`
}

// replay is POST /api/runs/{id}/replay: the run's pipeline run again, as the files the
// server reads now declare it (Config.Reload) and under their policies, every model
// request, tool call, approval and answer taken from the run's recording, nothing saved.
func (s *Server) replay(w http.ResponseWriter, r *http.Request) error {
	var req struct{}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	rec, err := s.load(r.PathValue("id"))
	if err != nil {
		return err
	}
	if rec.Status == runtime.Running {
		return &apiError{http.StatusConflict, runtime.CodeRun, fmt.Sprintf("run %s is running: it can be replayed once it has stopped or paused", rec.RunID)}
	}
	select {
	case s.replays <- struct{}{}:
		defer func() { <-s.replays }()
	default:
		return &apiError{http.StatusServiceUnavailable, CodeTooManyRuns, fmt.Sprintf("%d replays are running: try again in a moment", maxReplays)}
	}
	prog := s.cfg.Program
	if s.cfg.Reload != nil {
		if prog, err = s.cfg.Reload(); err != nil {
			code := errcode.Code(err)
			if code == "" {
				code = lang.CodeSyntax
			}
			return &apiError{http.StatusConflict, code, "the files as they are now do not load, so nothing was replayed: " + trunc(err.Error(), 2000)}
		}
	}
	var mu sync.Mutex
	var evs []runtime.Event
	rc := s.cfg.Runtime
	rc.Store, rc.OnMark = nil, nil
	rc.OnEvent = func(e runtime.Event) {
		if e.Type == "progress" {
			return // live only: records do not keep them
		}
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	}
	rt, err := runtime.New(prog, rc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), replayTimeout)
	defer cancel()
	res, err := rt.Replay(ctx, rec)
	if err != nil {
		if errcode.Code(err) == runtime.CodeRun {
			return &apiError{http.StatusConflict, runtime.CodeRun, err.Error()}
		}
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	out := replayView{RunID: res.RunID, Status: res.Status, Output: res.Output, Error: res.Error, Meta: res.Meta, Events: make([]wireEvent, len(evs))}
	for i, e := range evs {
		out.Events[i] = s.wire(rec.RunID, i+1, e)
	}
	if i, ok := diverged(rec.Events, evs); ok {
		d := &divergence{Seq: i + 1}
		if i < len(rec.Events) {
			we := s.wire(rec.RunID, i+1, rec.Events[i])
			d.Recorded = &we
		}
		if i < len(evs) {
			d.Replayed = &out.Events[i]
		}
		out.Diverged = d
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// diverged returns the index of the first event of replayed that differs from the one
// recorded at that index (or where one list ends before the other). Two events are the same
// when all they say is, but for when they happened, how long they took, where the stage is
// written (the file may have moved lines; a replay matches calls by their place in the run,
// not by line) and whether a mock answered (in a replay the recording answers).
func diverged(recorded, replayed []runtime.Event) (int, bool) {
	n := max(len(recorded), len(replayed))
	for i := range n {
		if i >= len(recorded) || i >= len(replayed) || !sameEvent(recorded[i], replayed[i]) {
			return i, true
		}
	}
	return 0, false
}

func sameEvent(a, b runtime.Event) bool {
	if a.Type != b.Type {
		return false
	}
	ka, errA := eventKey(a)
	kb, errB := eventKey(b)
	return errA == nil && errB == nil && bytes.Equal(ka, kb)
}

func eventKey(e runtime.Event) ([]byte, error) {
	e.Time, e.DurationMs, e.RunID, e.At, e.Mocked = time.Time{}, 0, "", "", false
	if e.Error != nil {
		ei := *e.Error
		ei.At = ""
		e.Error = &ei
	}
	return json.Marshal(e)
}
