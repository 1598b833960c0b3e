package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/mcpserver"
	"halolang.dev/halo/host/runstore"
	"halolang.dev/halo/host/runtime"
)

// Stable codes of the API's errors, beside the checks' (mcpserver's), the links' and the
// runtime's and stores' own.
const (
	CodeBadJSON      = "BAD_JSON"
	CodeBadRequest   = "BAD_REQUEST"
	CodeNoPipeline   = "UNKNOWN_PIPELINE"
	CodeRunNotFound  = "RUN_NOT_FOUND"
	CodeNotWaiting   = "NOT_WAITING"
	CodeNotRunning   = "NOT_RUNNING"
	CodeShuttingDown = "SHUTTING_DOWN"
	CodeTooManyRuns  = "TOO_MANY_RUNS"
	CodeNotFound     = "NOT_FOUND"
	// CodeTooLarge is mcpserver's: a body over the limit.
	CodeTooLarge = mcpserver.CodeTooLarge
	// CodeInternal is the runtime's: anything else that went wrong.
	CodeInternal = runtime.CodeInternal
)

// An apiError is an error response: {"error": {"code", "message"}} with a status.
type apiError struct {
	status        int
	code, message string
}

func (e *apiError) Error() string { return e.message }

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(&buf, `{"error":{"code":%q,"message":"the answer could not be encoded"}}`+"\n", CodeInternal)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="halo"`)
	}
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"code": e.code, "message": e.message}})
}

// errorOf maps an error from the runtime or the store to a response.
func errorOf(err error) *apiError {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	code := errcode.Code(err)
	switch {
	case runstore.IsNotFound(err):
		return &apiError{http.StatusNotFound, CodeRunNotFound, err.Error()}
	case code == runtime.CodeInput:
		return &apiError{http.StatusBadRequest, code, err.Error()}
	case code == runstore.CodeTaken:
		return &apiError{http.StatusConflict, code, err.Error()}
	case code == runtime.CodeRun:
		return &apiError{http.StatusConflict, CodeNotWaiting, err.Error()}
	case code == runstore.CodeCursor, code == runstore.CodeQuery:
		return &apiError{http.StatusBadRequest, code, err.Error()}
	case code == runstore.CodeStore:
		return &apiError{http.StatusServiceUnavailable, code, err.Error()}
	}
	if code == "" {
		code = CodeInternal
	}
	return &apiError{http.StatusInternalServerError, code, err.Error()}
}

// routes builds the handler: every route behind the checks it needs, one log line each.
func (s *Server) routes(mcp http.Handler) (http.Handler, error) {
	mux := http.NewServeMux()
	api := func(pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if ref := s.checks.Check(r, mcpserver.CheckOptions{}); ref != nil {
				writeError(w, &apiError{ref.Status, ref.Code, ref.Message})
				return
			}
			if err := h(w, r); err != nil {
				writeError(w, errorOf(err))
			}
		})
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	api("GET /metrics", func(w http.ResponseWriter, r *http.Request) error { s.metrics.handler.ServeHTTP(w, r); return nil })
	api("GET /api/pipelines", s.pipelines)
	api("POST /api/runs", s.startRun)
	api("GET /api/runs", s.listRuns)
	api("GET /api/runs/{id}", s.getRun)
	api("GET /api/runs/{id}/events", s.events)
	api("POST /api/runs/{id}/signal", s.signalRun)
	api("POST /api/runs/{id}/cancel", s.cancelRun)
	api("POST /api/runs/{id}/replay", s.replay)
	api("GET /api/runs/{id}/trace", s.trace)
	api("GET /api/source", s.source)
	api("/api/", func(w http.ResponseWriter, r *http.Request) error {
		return &apiError{http.StatusNotFound, CodeNotFound, fmt.Sprintf("no endpoint %s %s; see docs/serve.md", r.Method, trunc(r.URL.Path, 100))}
	})
	mux.HandleFunc("GET /approve/{token}", s.approvePage)
	mux.HandleFunc("POST /approve/{token}", s.approve)
	if s.cfg.SlackSecret != "" {
		mux.HandleFunc("POST /slack/interactions", s.slackInteraction)
	}
	if mcp != nil {
		mux.Handle("/mcp", mcp)
	}
	if s.cfg.Pages != nil {
		pages, err := s.cfg.Pages(mux, s.streamCtx.Done())
		if err != nil {
			return nil, err
		}
		if c, ok := pages.(Credentialed); ok {
			s.credential = c.Credential
		}
		mux.Handle("/", pages)
	}
	var h http.Handler = mux
	if mcp != nil {
		// /mcp, the one route a client calls in a loop, without the mux's matching.
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/mcp" {
				mcp.ServeHTTP(w, r)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	return s.limited(s.logged(h)), nil
}

// logged logs one line per request (off the request path: see accessLog), never with the
// query, which may hold the token.
func (s *Server) logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.status
		if status == 0 {
			status = http.StatusOK
		}
		path := r.URL.Path
		if strings.HasPrefix(path, "/approve/") {
			path = "/approve/…" // the link is a capability: keep it out of logs
		}
		s.metrics.request(status)
		s.access.add(accessLine{method: r.Method, path: trunc(path, 200), status: status, bytes: sw.n,
			duration: s.now().Sub(start).Round(time.Microsecond), remote: r.RemoteAddr})
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	status := "ok"
	if s.closing.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
}

// decode reads a JSON body of at most MaxBody bytes into v, refusing unknown fields and
// anything after the value.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &apiError{http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the request body is over the limit of %d bytes", s.cfg.MaxBody)}
		}
		return &apiError{http.StatusBadRequest, CodeBadRequest, "cannot read the request body: " + err.Error()}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &apiError{http.StatusBadRequest, CodeBadJSON, "the body is not the JSON this endpoint takes: " + trunc(err.Error(), 300)}
	}
	if dec.More() {
		return &apiError{http.StatusBadRequest, CodeBadJSON, "the body holds more than one JSON value"}
	}
	return nil
}

// A pipelineInfo is one pipeline as GET /api/pipelines lists it: as /mcp lists it as a
// tool (its doc comment as the description, its parameters as a JSON Schema), with the
// parameters as written.
type pipelineInfo struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	File         string          `json:"file,omitempty"`
	Params       []paramInfo     `json:"params"`
	Result       string          `json:"result,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

type paramInfo struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func (s *Server) pipelines(w http.ResponseWriter, r *http.Request) error {
	tools := map[string]json.RawMessage{}
	outs := map[string]json.RawMessage{}
	descs := map[string]string{}
	for _, t := range s.mcp.Tools() {
		descs[t.Name] = t.Description
		if t.RawInputSchema != nil {
			tools[t.Name] = t.RawInputSchema
		} else if b, err := json.Marshal(t.InputSchema); err == nil {
			tools[t.Name] = b
		}
		if t.RawOutputSchema != nil {
			outs[t.Name] = t.RawOutputSchema
		}
	}
	out := []pipelineInfo{}
	for _, d := range s.cfg.Program.Decls() {
		pd, ok := d.(*lang.PipelineDecl)
		if !ok {
			continue
		}
		p := pipelineInfo{Name: pd.Name.Name, Description: descs[pd.Name.Name], File: pd.Pos.File, Params: []paramInfo{},
			InputSchema: tools[pd.Name.Name], OutputSchema: outs[pd.Name.Name]}
		for _, pa := range pd.Params {
			typ := "Any"
			if pa.Type != nil {
				typ = pa.Type.String()
			}
			p.Params = append(p.Params, paramInfo{Name: pa.Name.Name, Type: typ})
		}
		if pd.Result != nil {
			p.Result = pd.Result.String()
		}
		out = append(out, p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"pipelines": out})
	return nil
}

// waitOf reads ?wait=30s: how long to wait for the run before answering 202.
func waitOf(r *http.Request) (time.Duration, error) {
	v, ok := r.URL.Query()["wait"]
	if !ok {
		return 0, nil
	}
	if len(v) != 1 {
		return 0, &apiError{http.StatusBadRequest, CodeBadRequest, "?wait is given more than once"}
	}
	if v[0] == "" {
		return 30 * time.Second, nil
	}
	d, err := time.ParseDuration(v[0])
	if err != nil {
		if n, nerr := strconv.Atoi(v[0]); nerr == nil {
			d, err = time.Duration(n)*time.Second, nil
		}
	}
	if err != nil || d < 0 || d > DefaultMaxWait {
		return 0, &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?wait=%q: want a duration such as 30s, at most %s", trunc(v[0], 40), DefaultMaxWait)}
	}
	return d, nil
}

type startRequest struct {
	Pipeline string         `json:"pipeline"`
	Inputs   map[string]any `json:"inputs"`
}

// A result is a run's answer once it stops (or as it stands).
type result struct {
	RunID  string             `json:"runId"`
	Status runtime.Status     `json:"status"`
	Output any                `json:"output,omitempty"`
	Error  *runtime.ErrorInfo `json:"error,omitempty"`
	Meta   *runtime.Meta      `json:"meta,omitempty"`
	Paused *pausedInfo        `json:"paused,omitempty"`
}

// pausedInfo says what a paused run waits for, and the link that answers it.
type pausedInfo struct {
	WaitingFor string    `json:"waitingFor"`
	Question   any       `json:"question"`
	Link       string    `json:"link,omitempty"`
	Expires    time.Time `json:"linkExpires,omitzero"`
}

func (s *Server) pausedOf(rec *runtime.Record) *pausedInfo {
	if rec.Status != runtime.Paused || rec.Meta.Paused == nil {
		return nil
	}
	p := &pausedInfo{WaitingFor: rec.Meta.Paused.WaitingFor, Question: rec.Meta.Paused.Question}
	if l, ok := s.links.pauseOf(rec); ok {
		p.Link, p.Expires = s.links.url(l), time.Unix(l.Expires, 0).UTC()
	}
	return p
}

// admit takes a slot for a run, or refuses while the server stops or is full.
func (s *Server) admit() (release func(), err error) {
	if s.closing.Load() {
		return nil, &apiError{http.StatusServiceUnavailable, CodeShuttingDown, "the server is stopping: it takes no new runs or signals"}
	}
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
		return nil, &apiError{http.StatusServiceUnavailable, CodeTooManyRuns, fmt.Sprintf("%d runs are running in this server, the most at once; try again when one ends", cap(s.slots))}
	}
}

type outcome struct {
	res *runtime.Result
	err error
}

// launch runs f (a Run or a Signal) in a goroutine the server owns, and waits until the run
// is held (its id), f fails before that, or wait passes after that.
func (s *Server) launch(w http.ResponseWriter, r *http.Request, wait time.Duration, sig *runstore.Signal, f func(ctx context.Context) (*runtime.Result, error)) error {
	release, err := s.admit()
	if err != nil {
		return err
	}
	began := make(chan string, 1)
	done := make(chan outcome, 1)
	ctx := withBegan(s.runCtx, began)
	if sig != nil {
		ctx = withSignal(ctx, *sig)
	}
	s.runs.Go(func() {
		defer release()
		res, err := f(ctx)
		done <- outcome{res, err}
	})
	var id string
	var o *outcome
	select {
	case id = <-began:
	case x := <-done:
		o = &x
		select {
		case id = <-began:
		default:
		}
		if id == "" { // refused before it was held: bad inputs, a run not waiting
			if o.err == nil {
				o.err = errors.New("the run stopped before it started")
			}
			return o.err
		}
	}
	if wait > 0 && o == nil {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case x := <-done:
			o = &x
		case <-t.C:
		case <-r.Context().Done():
			return nil
		}
	}
	if o != nil && o.res != nil && o.err != nil {
		return unsaved(o.res, o.err)
	}
	if o != nil && o.res != nil && wait > 0 {
		return s.writeResult(w, o.res)
	}
	if o != nil && o.res == nil {
		return o.err
	}
	status := runtime.Running
	if o != nil {
		status = o.res.Status
	}
	writeJSON(w, http.StatusAccepted, result{RunID: id, Status: status})
	return nil
}

// unsaved is the answer for a run that ended but whose record the store could not save (a
// full disk): the store's error (STORE, 503), not the run's result, so that no client takes
// for kept a run nobody can read again. The server's log has it too (tracker.Save).
func unsaved(res *runtime.Result, err error) error {
	e := errorOf(err)
	return &apiError{e.status, e.code, fmt.Sprintf("run %s ended %s, but its record could not be saved: %v", res.RunID, res.Status, err)}
}

// writeResult answers with a stopped run's result (200).
func (s *Server) writeResult(w http.ResponseWriter, res *runtime.Result) error {
	out := result{RunID: res.RunID, Status: res.Status, Output: res.Output, Error: res.Error, Meta: &res.Meta}
	if res.Status == runtime.Paused {
		if rec, err := s.store.Load(res.RunID); err == nil {
			out.Paused = s.pausedOf(rec)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request) error {
	wait, err := waitOf(r)
	if err != nil {
		return err
	}
	var req startRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	pd := s.cfg.Program.Pipeline(req.Pipeline)
	if pd == nil {
		return &apiError{http.StatusNotFound, CodeNoPipeline, fmt.Sprintf("no pipeline %q (have: %s)", trunc(req.Pipeline, 100), strings.Join(s.rt.Pipelines(), ", "))}
	}
	if req.Inputs == nil {
		req.Inputs = map[string]any{}
	}
	return s.launch(w, r, wait, nil, func(ctx context.Context) (*runtime.Result, error) {
		return s.rt.Run(ctx, pd.Name.Name, req.Inputs)
	})
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) error {
	if wantsStream(r) {
		return s.listChanges(w, r)
	}
	q := r.URL.Query()
	query := runstore.Query{Status: runtime.Status(q.Get("status")), Pipeline: q.Get("pipeline"), Cursor: q.Get("cursor")}
	switch query.Status {
	case "", runtime.Running, runtime.Paused, runtime.Completed, runtime.Failed:
	default:
		return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?status=%q: want running, paused, completed or failed", trunc(string(query.Status), 40))}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > runstore.MaxLimit {
			return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?limit=%q: want 1 to %d", trunc(v, 40), runstore.MaxLimit)}
		}
		query.Limit = n
	}
	if err := listFilters(q, &query); err != nil {
		return err
	}
	page, err := s.store.List(r.Context(), query)
	if err != nil {
		return err
	}
	if page.Runs == nil {
		page.Runs = []runstore.Summary{}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listFilters reads GET /api/runs' search and filters beyond status and pipeline into query:
// ?q= words, ?since= and ?until= (RFC 3339), ?violations=true, ?minCost= dollars.
func listFilters(q url.Values, query *runstore.Query) error {
	query.Text = q.Get("q")
	if len(query.Text) > 1000 {
		return &apiError{http.StatusBadRequest, runstore.CodeQuery, fmt.Sprintf("?q= of %d bytes: at most 1000", len(query.Text))}
	}
	for _, f := range []struct {
		name string
		to   *time.Time
	}{{"since", &query.Since}, {"until", &query.Until}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?%s=%q: want a time as RFC 3339 (2026-12-01T09:00:00Z)", f.name, trunc(v, 40))}
			}
			*f.to = t
		}
	}
	switch v := q.Get("violations"); v {
	case "", "false":
	case "true":
		query.Violations = true
	default:
		return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?violations=%q: want true or false", trunc(v, 40))}
	}
	if v := q.Get("minCost"); v != "" {
		c, err := strconv.ParseFloat(v, 64)
		if err != nil || c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return &apiError{http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("?minCost=%q: want dollars, 0 or more (0.05)", trunc(v, 40))}
		}
		query.MinCost = c
	}
	return nil
}

// runView is GET /api/runs/{id}.
type runView struct {
	RunID    string             `json:"runId"`
	Pipeline string             `json:"pipeline"`
	File     string             `json:"file,omitempty"`
	Status   runtime.Status     `json:"status"`
	Inputs   map[string]any     `json:"inputs"`
	Output   any                `json:"output"`
	Error    *runtime.ErrorInfo `json:"error,omitempty"`
	Meta     runtime.Meta       `json:"meta"`
	Paused   *pausedInfo        `json:"paused,omitempty"`
	Events   int                `json:"events"`
	Started  time.Time          `json:"started"`
	Updated  time.Time          `json:"updated"`
}

func (s *Server) load(id string) (*runtime.Record, error) {
	rec, err := s.store.Load(id)
	if err != nil && (runstore.IsNotFound(err) || errcode.Code(err) == runtime.CodeRun) {
		return nil, &apiError{http.StatusNotFound, CodeRunNotFound, fmt.Sprintf("no run %q", trunc(id, 100))}
	}
	return rec, err
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) error {
	rec, err := s.load(r.PathValue("id"))
	if err != nil {
		return err
	}
	n := len(rec.Events)
	if lr := s.liveRun(rec.RunID); lr != nil {
		n = lr.count()
	} else if rec.Status == runtime.Running {
		// Held by another process: its live events are in the store.
		if evs, _, err := s.store.Events(r.Context(), rec.RunID, n); err == nil {
			n += len(evs)
		}
	}
	writeJSON(w, http.StatusOK, runView{
		RunID: rec.RunID, Pipeline: rec.Pipeline, File: rec.File, Status: rec.Status, Inputs: rec.Inputs,
		Output: rec.Output, Error: rec.Error, Meta: rec.Meta, Paused: s.pausedOf(rec), Events: n,
		Started: rec.Started, Updated: rec.Updated,
	})
	return nil
}

type signalRequest struct {
	Channel string `json:"channel"`
	Payload any    `json:"payload"`
}

func (s *Server) signalRun(w http.ResponseWriter, r *http.Request) error {
	wait, err := waitOf(r)
	if err != nil {
		return err
	}
	var req signalRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.Channel == "" {
		return &apiError{http.StatusBadRequest, CodeBadRequest, `a signal needs a channel: {"channel": "yield", "payload": ...}`}
	}
	rec, err := s.load(r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := waiting(rec, req.Channel); err != nil {
		return err
	}
	return s.continueRun(w, r, wait, rec.RunID, runstore.Signal{Channel: req.Channel, Payload: req.Payload, Via: "api"})
}

// waiting refuses a signal for a run that does not wait on channel.
func waiting(rec *runtime.Record, channel string) error {
	if rec.Status != runtime.Paused || rec.Meta.Paused == nil {
		return &apiError{http.StatusConflict, CodeNotWaiting, fmt.Sprintf("run %s is %s, not paused: it waits for no signal", rec.RunID, rec.Status)}
	}
	if w := rec.Meta.Paused.WaitingFor; w != channel {
		return &apiError{http.StatusConflict, CodeNotWaiting, fmt.Sprintf("run %s waits on channel %q, not %q", rec.RunID, w, trunc(channel, 100))}
	}
	return nil
}

func (s *Server) continueRun(w http.ResponseWriter, r *http.Request, wait time.Duration, id string, sig runstore.Signal) error {
	return s.launch(w, r, wait, &sig, func(ctx context.Context) (*runtime.Result, error) {
		return s.rt.Signal(ctx, id, sig.Channel, sig.Payload)
	})
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) error {
	var none struct{}
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &none); err != nil {
			return err
		}
	}
	id := r.PathValue("id")
	if s.cancelLocal(id, errCancelled) {
		writeJSON(w, http.StatusAccepted, result{RunID: id, Status: runtime.Running})
		return nil
	}
	rec, err := s.load(id)
	if err != nil {
		return err
	}
	switch rec.Status {
	case runtime.Running:
		if err := s.store.RequestCancel(r.Context(), id); err != nil {
			return err
		}
		writeJSON(w, http.StatusAccepted, result{RunID: id, Status: runtime.Running})
		return nil
	case runtime.Paused:
		// Nothing runs it: take it as a signal would, and save it cancelled.
		if err := s.store.Claim(r.Context(), rec, runstore.Signal{Channel: "cancel", Via: "api"}); err != nil {
			return errorOf(err)
		}
		now := s.now().UTC()
		rec.Status, rec.Resume, rec.Meta.Paused, rec.Updated = runtime.Failed, nil, nil, now
		rec.Error = &runtime.ErrorInfo{Code: runtime.CodeCancelled, Message: "the paused run was cancelled through the API"}
		rec.Events = append(rec.Events, runtime.Event{Type: "run", Time: now, RunID: id, Status: runtime.Failed, Error: rec.Error})
		if err := s.store.Save(rec); err != nil {
			return err
		}
		s.metrics.stopped(rec.Pipeline, rec.Status)
		s.pokes.poke(id)
		writeJSON(w, http.StatusOK, result{RunID: id, Status: rec.Status, Error: rec.Error})
		return nil
	}
	return &apiError{http.StatusConflict, CodeNotRunning, fmt.Sprintf("run %s is %s already: there is nothing to cancel", id, rec.Status)}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
