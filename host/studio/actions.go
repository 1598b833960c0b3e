package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rerun starts the run's pipeline again with its inputs, through the API, and shows the new
// run.
func (s *Studio) rerun(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	var rv runView
	if err := c.call("GET", runPath(id), nil, &rv); err != nil {
		s.problem(w, r, err)
		return
	}
	var res struct {
		RunID string `json:"runId"`
	}
	if err := c.call("POST", "/api/runs", map[string]any{"pipeline": rv.Pipeline, "inputs": rv.Inputs}, &res); err != nil {
		if err.Status == http.StatusBadRequest || err.Status == http.StatusNotFound || err.Status == http.StatusServiceUnavailable {
			err.Message += " Nothing was started."
			s.refusedAnswer(w, r, c, id, err, "")
			return
		}
		s.problem(w, r, err)
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(res.RunID)+"?sent=rerun", http.StatusSeeOther)
}

// valuesOf is a run's inputs as the start form holds them: text as it is, other values as
// JSON, a schema's fields one by one.
func valuesOf(inputs map[string]any) url.Values {
	v := url.Values{}
	for name, in := range inputs {
		if obj, ok := in.(map[string]any); ok {
			for k, fv := range obj {
				v.Set("in."+name+"."+k, formText(fv))
			}
		}
		v.Set("in."+name, formText(in))
	}
	return v
}

func formText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// A replayData is the page of a replay.
type replayData struct {
	page
	ID, Short, Pipeline string
	Status, RunStatus   string
	Events, RunEvents   int
	Error               *errorInfo
	Output              text
	HasOutput           bool
	Diverged            *divergedView
	View                eventView
}

// A divergedView is where a replay left its run: the event of each there.
type divergedView struct {
	Seq                      int
	Recorded, Replayed       entry
	HasRecorded, HasReplayed bool
}

// replay replays the run through the API, against the files as they are now, and shows
// where the replay left the run.
func (s *Studio) replay(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	var rv runView
	if err := c.call("GET", runPath(id), nil, &rv); err != nil {
		s.problem(w, r, err)
		return
	}
	var res struct {
		Status   string     `json:"status"`
		Output   any        `json:"output"`
		Error    *errorInfo `json:"error"`
		Events   []event    `json:"events"`
		Diverged *struct {
			Seq      int    `json:"seq"`
			Recorded *event `json:"recorded"`
			Replayed *event `json:"replayed"`
		} `json:"diverged"`
	}
	if err := c.call("POST", runPath(id)+"/replay", map[string]any{}, &res); err != nil {
		if err.Status == http.StatusConflict || err.Status == http.StatusServiceUnavailable {
			err.Message = "Nothing was replayed: " + err.Message
			s.refusedAnswer(w, r, c, id, err, "")
			return
		}
		s.problem(w, r, err)
		return
	}
	d := replayData{page: page{Title: "Replay of " + rv.Pipeline + " · run " + shortID(rv.RunID), Nav: "runs"},
		ID: rv.RunID, Short: shortID(rv.RunID), Pipeline: rv.Pipeline, Status: res.Status, RunStatus: rv.Status,
		Events: len(res.Events), RunEvents: rv.Events, Error: res.Error}
	if res.Status == "completed" {
		d.Output, d.HasOutput = jsonText("output", res.Output)
	}
	end := rv.Started
	if n := len(res.Events); n > 0 {
		end = res.Events[n-1].Time
	}
	d.View = build(res.Events, rv.Started, end)
	if dv := res.Diverged; dv != nil {
		d.Diverged = &divergedView{Seq: dv.Seq}
		if dv.Recorded != nil {
			d.Diverged.Recorded, d.Diverged.HasRecorded = entryOf(*dv.Recorded), true
		}
		if dv.Replayed != nil {
			d.Diverged.Replayed, d.Diverged.HasReplayed = entryOf(*dv.Replayed), true
		}
		markDiverged(d.View.Stages, dv.Seq)
	}
	s.render(w, r, http.StatusOK, "replay", &d)
}

// markDiverged marks the span that shows event seq, and opens nothing else.
func markDiverged(spans []span, seq int) bool {
	for i := range spans {
		for _, q := range spans[i].Seqs {
			if q == seq {
				spans[i].Diverged = true
				return true
			}
		}
		if markDiverged(spans[i].Children, seq) {
			return true
		}
	}
	return false
}

// exportRecord sends the run as the API gives it, with its events, as one JSON file: what
// the run's page shows, redacted as the events are. (The recording, which keeps what the
// models and tools said unredacted, stays in the store: `halo runs show --json` prints it
// on the server's machine.)
func (s *Studio) exportRecord(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	var run, evs json.RawMessage
	if err := c.call("GET", runPath(id), nil, &run); err != nil {
		s.problem(w, r, err)
		return
	}
	var list struct {
		Events json.RawMessage `json:"events"`
	}
	if err := c.call("GET", runPath(id)+"/events", nil, &list); err != nil {
		s.problem(w, r, err)
		return
	}
	evs = list.Events
	var buf bytes.Buffer
	buf.WriteString(`{"run":`)
	buf.Write(run)
	buf.WriteString(`,"events":`)
	buf.Write(evs)
	buf.WriteString("}\n")
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		s.problem(w, r, &apiError{http.StatusBadGateway, "INTERNAL", "the API's answer could not be read: " + err.Error()})
		return
	}
	download(w, "run-"+id+".json", out.Bytes())
}

// exportTrace sends the run's trace, as the API makes it from the record: OTLP JSON.
func (s *Studio) exportTrace(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	id := r.PathValue("id")
	status, body := c.do(r.Context(), "GET", runPath(id)+"/trace", nil, nil)
	if status != http.StatusOK {
		s.problem(w, r, errorOf(status, body))
		return
	}
	download(w, "trace-"+id+".json", body)
}

// download sends b as a JSON file to save, never shown as a page.
func download(w http.ResponseWriter, name string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", "attachment; filename="+strconv.Quote(safeName(name)))
	h.Set("Cache-Control", "no-store")
	w.Write(b)
}

// safeName keeps a file name to letters, digits, '-', '_' and '.': a run id comes from the
// address.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// A sourceLine is one line of the source view.
type sourceLine struct {
	N     int
	Text  string
	Mark  bool
	Caret string
}

type sourceData struct {
	page
	File      string
	Line, Col int
	Run       string
	Lines     []sourceLine
}

// sourcePage shows a .halo file the server serves, with a line (and column) marked: where a
// stage is written, or where a run failed.
func (s *Studio) sourcePage(w http.ResponseWriter, r *http.Request) {
	c := s.caller(r)
	q := r.URL.Query()
	file := q.Get("file")
	var src struct {
		File string `json:"file"`
		Text string `json:"text"`
	}
	if err := c.call("GET", "/api/source?"+url.Values{"file": {file}}.Encode(), nil, &src); err != nil {
		if err.Code == "NOT_FOUND" {
			err.Message = fmt.Sprintf("This server serves no file %q.", trim(file, 200))
		}
		s.problem(w, r, err)
		return
	}
	d := sourceData{page: page{Title: src.File, Nav: "runs"}, File: src.File}
	d.Line, _ = strconv.Atoi(q.Get("line"))
	d.Col, _ = strconv.Atoi(q.Get("col"))
	if run := q.Get("run"); run != "" && len(run) <= 64 && safeName(run) == run {
		d.Run = run
	}
	lines := strings.Split(strings.ReplaceAll(src.Text, "\r\n", "\n"), "\n")
	if n := len(lines); n > 1 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if d.Line < 1 || d.Line > len(lines) {
		d.Line, d.Col = 0, 0
	}
	for i, l := range lines {
		sl := sourceLine{N: i + 1, Text: l, Mark: i+1 == d.Line}
		if sl.Mark && d.Col > 0 && d.Col <= utf8.RuneCountInString(l)+1 {
			// Under the column, counted in runes (as positions are); tabs kept so it lines up.
			var pad strings.Builder
			for j, ru := range []rune(l) {
				if j >= d.Col-1 {
					break
				}
				if ru == '\t' {
					pad.WriteRune('\t')
				} else {
					pad.WriteRune(' ')
				}
			}
			sl.Caret = pad.String() + "^"
		}
		d.Lines = append(d.Lines, sl)
	}
	s.render(w, r, http.StatusOK, "source", &d)
}

// prefill is the start form's values for "?from=RUN": that run's inputs.
func (s *Studio) prefill(c caller, from string) (url.Values, *apiError) {
	var rv runView
	if err := c.call("GET", runPath(from), nil, &rv); err != nil {
		return nil, err
	}
	return valuesOf(rv.Inputs), nil
}
