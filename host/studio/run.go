package studio

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// A callRow is one entry of context.meta.calls.
type callRow struct {
	Kind, Target, Agent, Model, Tokens, Cost, Duration, Error string
	Mocked                                                    bool
}

// A wait is what a paused run waits for, and how to answer it.
type wait struct {
	Channel  string
	Approval bool
	Question text
	HasQ     bool
	Agent    string
	Target   string
	Policy   string
	Args     text
	HasArgs  bool
	Link     string
	Expires  string
}

type runData struct {
	page
	ID, Short, Pipeline, File, Status string
	// FileLink is the source view of File.
	FileLink                        string
	Started, Duration, Cost, Tokens string
	Events                          int
	// View is the waterfall, the conversations and the tables of cost and tokens.
	View      eventView
	Inputs    []text
	Output    text
	HasOutput bool
	Error     *errorInfo
	// ErrorLink is the source view of where the run failed.
	ErrorLink  string
	Calls      []callRow
	Violations []violationInfo
	Wait       *wait
	// Live says the run may still change: the page follows its events.
	Live bool
	// Key changes whenever the run does; the page's script swaps in parts whose key changed.
	Key string
	// Answer is text typed into the answer box, kept when the answer was refused.
	Answer string
	// CanCancel says the run is running or paused; CanReplay that it has stopped or paused.
	CanCancel, CanReplay bool
}

var sentNotices = map[string]string{
	"approve": "Approved: the run goes on.",
	"decline": "Declined: the run goes on with your reason.",
	"answer":  "Your answer was sent: the run goes on.",
	"cancel":  "The run was asked to stop.",
	"rerun":   "This is a new run, with the inputs of the one it reran.",
}

func runPath(id string) string { return "/api/runs/" + url.PathEscape(id) }

// loadRun gathers a run's page from the API: the run, then its events.
func (s *Studio) loadRun(c caller, id string) (runData, *apiError) {
	var rv runView
	if err := c.call("GET", runPath(id), nil, &rv); err != nil {
		if err.Code == "RUN_NOT_FOUND" {
			err.Message = fmt.Sprintf("There is no run %q on this server. It may have been started on another server, or the address is mistyped.", trim(id, 100))
		}
		return runData{}, err
	}
	var evs struct {
		Events []event `json:"events"`
	}
	if err := c.call("GET", runPath(id)+"/events", nil, &evs); err != nil {
		return runData{}, err
	}
	d := runData{
		page: page{Title: rv.Pipeline + " · run " + shortID(rv.RunID), Nav: "runs"},
		ID:   rv.RunID, Short: shortID(rv.RunID), Pipeline: rv.Pipeline, File: rv.File, FileLink: sourceFile(rv.File), Status: rv.Status,
		Started: clock(rv.Started), Events: len(evs.Events), Error: rv.Error,
		Violations: rv.Meta.Violations,
		Live:       rv.Status == "running" || rv.Status == "paused",
		CanCancel:  rv.Status == "running" || rv.Status == "paused",
		CanReplay:  rv.Status != "running",
	}
	if rv.Error != nil {
		d.ErrorLink = sourceLink(rv.Error.At)
	}
	end := rv.Updated
	if rv.Status == "running" {
		end = s.cfg.Now()
	}
	if !rv.Started.IsZero() && end.After(rv.Started) {
		d.Duration = durationOf(end.Sub(rv.Started))
	}
	d.Key = fmt.Sprintf("%s-%d-%s", rv.Status, len(evs.Events), rv.Updated.Format("150405.000000"))
	d.View = build(evs.Events, rv.Started, end)
	unknown, in, out, priced := false, 0, 0, false
	for _, ci := range rv.Meta.Calls {
		unknown = unknown || ci.Unpriced
		if ci.Usage != nil {
			in, out, priced = in+ci.Usage.InputTokens, out+ci.Usage.OutputTokens, true
		}
	}
	d.Cost = costOf(rv.Meta.Cost, unknown)
	if priced {
		d.Tokens = tokens(in, out)
	}
	names := make([]string, 0, len(rv.Inputs))
	for k := range rv.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if t, ok := jsonText(k, rv.Inputs[k]); ok {
			d.Inputs = append(d.Inputs, t)
		}
	}
	if rv.Status == "completed" {
		d.Output, d.HasOutput = jsonText("output", rv.Output)
	}
	for _, ci := range rv.Meta.Calls {
		cr := callRow{Kind: ci.Kind, Target: ci.Target, Agent: ci.Agent, Model: ci.Model, Duration: duration(ci.DurationMs), Error: ci.Error, Mocked: ci.Mocked}
		if ci.Kind == "llm" || ci.Cost != 0 {
			cr.Cost = costOf(ci.Cost, ci.Unpriced)
		}
		if ci.Usage != nil {
			cr.Tokens = fmt.Sprintf("%d / %d", ci.Usage.InputTokens, ci.Usage.OutputTokens)
		}
		d.Calls = append(d.Calls, cr)
	}
	if rv.Status == "paused" && rv.Meta.Paused != nil {
		p := rv.Meta.Paused
		wt := &wait{Channel: p.WaitingFor, Approval: p.WaitingFor == "approval"}
		wt.Question, wt.HasQ = jsonText("question", p.Question)
		if p.Named != nil {
			wt.Agent, _ = p.Named["agent"].(string)
			wt.Target, _ = p.Named["target"].(string)
			wt.Policy, _ = p.Named["policy"].(string)
			wt.Args, wt.HasArgs = jsonText("arguments", p.Named["args"])
		}
		if rv.Paused != nil && rv.Paused.Link != "" {
			wt.Link, wt.Expires = rv.Paused.Link, clock(rv.Paused.LinkExpires)
		}
		d.Wait = wt
	}
	return d, nil
}

func (s *Studio) runPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.loadRun(s.caller(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	d.Notice = sentNotices[r.URL.Query().Get("sent")]
	s.render(w, r, http.StatusOK, "run", &d)
}

// runEvents relays the API's event stream of a run (server-sent events, resumed with
// Last-Event-ID) to the run's page, with the token of the page's cookie.
func (s *Studio) runEvents(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	hdr := http.Header{"Accept": {"text/event-stream"}}
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		hdr.Set("Last-Event-ID", v)
	}
	c.api.ServeHTTP(w, c.request(r.Context(), "GET", runPath(r.PathValue("id"))+"/events", nil, hdr))
}

// refusedAnswer shows the run's page again with why the answer was not taken; what was
// typed stays in the box.
func (s *Studio) refusedAnswer(w http.ResponseWriter, r *http.Request, c caller, id string, why *apiError, typed string) {
	d, err := s.loadRun(c, id)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if why.Code == "NOT_WAITING" || why.Code == "RUN_TAKEN" {
		why.Message = "Nothing was sent: " + why.Message + "."
	}
	d.Problem, d.Answer = why, typed
	s.render(w, r, why.Status, "run", &d)
}

// answer continues a paused run through the API's signal: Approve or Decline (with a
// reason) send what an approval link sends; the text box sends its text, or JSON.
func (s *Studio) answer(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	if err := parseForm(w, r); err != nil {
		s.problem(w, r, err)
		return
	}
	f := r.PostForm
	channel := f.Get("channel")
	typed := f.Get("answer")
	if channel == "" {
		s.refusedAnswer(w, r, c, id, &apiError{http.StatusBadRequest, "BAD_REQUEST", "The answer names no channel: load the run's page again."}, typed)
		return
	}
	var payload any
	sent := "answer"
	switch decision := f.Get("decision"); decision {
	case "approve", "decline":
		p := map[string]any{"approved": decision == "approve", "action": decision}
		if reason := strings.TrimSpace(f.Get("reason")); reason != "" {
			p["text"] = reason
		}
		payload, sent = p, decision
	case "":
		payload = typed
		if f.Get("as") == "json" {
			if err := json.Unmarshal([]byte(typed), &payload); err != nil {
				s.refusedAnswer(w, r, c, id, &apiError{http.StatusBadRequest, "BAD_JSON", "The answer is not JSON (" + err.Error() + "): nothing was sent."}, typed)
				return
			}
		}
	default:
		s.refusedAnswer(w, r, c, id, &apiError{http.StatusBadRequest, "BAD_REQUEST", "The decision must be approve or decline."}, typed)
		return
	}
	if err := c.call("POST", runPath(id)+"/signal", map[string]any{"channel": channel, "payload": payload}, nil); err != nil {
		if err.Status == http.StatusNotFound || err.Status == http.StatusUnauthorized || err.Status == http.StatusForbidden {
			s.problem(w, r, err)
			return
		}
		s.refusedAnswer(w, r, c, id, err, typed)
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"?sent="+sent, http.StatusSeeOther)
}

func (s *Studio) cancel(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	if err := c.call("POST", runPath(id)+"/cancel", map[string]any{}, nil); err != nil {
		if err.Status == http.StatusConflict {
			s.refusedAnswer(w, r, c, id, err, "")
			return
		}
		s.problem(w, r, err)
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"?sent=cancel", http.StatusSeeOther)
}
