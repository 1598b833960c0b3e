package studio_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestActions: rerun starts the pipeline again with the run's inputs; the start form filled
// from a run holds its inputs to edit; a replay against today's files shows where it left
// the run; the record and the trace download as JSON; the source view marks the line.
func TestActions(t *testing.T) {
	today := strings.Replace(src, `DenyArgs("Files.write", "path", "^secret")`, `DenyArgs("Files.read", "path", "^notes")`, 1)
	e := newEnv(t, opts{reload: today})
	c := e.client()
	greet := e.run("Greet", map[string]any{"name": "Ada"})
	id := str(greet["runId"])

	// Rerun: a new run, the same inputs.
	st, _, hdr := e.page(c, "POST", "/runs/"+id+"/rerun", url.Values{})
	loc := hdr.Get("Location")
	if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/runs/") || !strings.HasSuffix(loc, "?sent=rerun") || strings.Contains(loc, id) {
		t.Fatalf("rerun: %d %q", st, loc)
	}
	again := strings.TrimSuffix(strings.TrimPrefix(loc, "/runs/"), "?sent=rerun")
	m := e.waitStatus(again, "completed")
	if str(m["inputs"]) != "map[name:Ada]" || e.runCount() != 2 {
		t.Errorf("the rerun: inputs %v, %d runs", m["inputs"], e.runCount())
	}
	st, body, _ := e.page(c, "GET", loc, nil)
	if st != 200 || !strings.Contains(body, "This is a new run, with the inputs of the one it reran.") {
		t.Errorf("the rerun's page: %d", st)
	}
	// Edited inputs: the form, filled.
	st, body, _ = e.page(c, "GET", "/start/Greet?from="+id, nil)
	if st != 200 || !strings.Contains(body, `name="in.name" rows="3">Ada</textarea>`) || !strings.Contains(body, "The inputs of run "+id[:8]) {
		t.Errorf("the form from a run: %d\n%s", st, body)
	}
	if st, body, _ = e.page(c, "GET", "/start/Greet?from=nope", nil); st != http.StatusNotFound || !strings.Contains(body, "RUN_NOT_FOUND") {
		t.Errorf("the form from no run: %d", st)
	}

	// Replay: the same run, or where today's policy leaves it.
	st, body, _ = e.page(c, "POST", "/runs/"+id+"/replay", url.Values{})
	if st != 200 || !strings.Contains(body, "The replay did what the run did") {
		t.Errorf("replay of Greet: %d\n%s", st, body)
	}
	tidy := e.run("Tidy", map[string]any{"task": "merge"})
	tid := str(tidy["runId"])
	st, body, _ = e.page(c, "POST", "/runs/"+tid+"/replay", url.Values{})
	if st != 200 || !strings.Contains(body, "Where the replay left the run: event") || !strings.Contains(body, "decision-refused") || !strings.Contains(body, "the replay left the run here") {
		t.Errorf("replay of Tidy under today's policy: %d\n%s", st, body)
	}
	if n := e.runCount(); n != 3 {
		t.Errorf("%d runs after the replays, want 3: a replay saves nothing", n)
	}
	if st, body, _ = e.page(c, "POST", "/runs/nope/replay", url.Values{}); st != http.StatusNotFound || !strings.Contains(body, "RUN_NOT_FOUND") {
		t.Errorf("replay of no run: %d", st)
	}

	// Exports: attachments, JSON, never a page.
	st, body, hdr = e.page(c, "GET", "/runs/"+tid+"/record.json", nil)
	var rec struct {
		Run    map[string]any   `json:"run"`
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal([]byte(body), &rec); st != 200 || err != nil || rec.Run["runId"] != tid || len(rec.Events) == 0 ||
		hdr.Get("Content-Type") != "application/json" || hdr.Get("Content-Disposition") != `attachment; filename="run-`+tid+`.json"` {
		t.Errorf("the record: %d %v %v %v", st, err, hdr, rec.Run)
	}
	if strings.Contains(body, "ada@example.com") {
		t.Error("the record export holds what the policy redacted")
	}
	st, body, hdr = e.page(c, "GET", "/runs/"+tid+"/trace.json", nil)
	if st != 200 || !strings.Contains(body, `"resourceSpans"`) || hdr.Get("Content-Disposition") != `attachment; filename="trace-`+tid+`.json"` {
		t.Errorf("the trace: %d %v\n%s", st, hdr, body)
	}
	if st, _, hdr = e.page(c, "GET", `/runs/a%22%3B%20x%3D%3Cb%3E/record.json`, nil); st != http.StatusNotFound || hdr.Get("Content-Disposition") != "" {
		t.Errorf("the record of a hostile id: %d %v", st, hdr)
	}

	// The source view: the file served, the line marked; nothing else is read.
	st, body, _ = e.page(c, "GET", "/source?file=flows.halo&line=23&col=3&run="+id, nil)
	if st != 200 || !strings.Contains(body, `<li id="L23" class="mark" aria-current="location">`) || !strings.Contains(body, "pipeline Greet") || !strings.Contains(body, `href="/runs/`+id+`"`) {
		t.Errorf("the source view: %d\n%s", st, body)
	}
	for _, q := range []string{"file=../../../../etc/passwd", "file=/etc/passwd", "file=", "file=%3Cscript%3Ealert(1)%3C%2Fscript%3E"} {
		st, body, _ := e.page(c, "GET", "/source?"+q, nil)
		if st != http.StatusNotFound || strings.Contains(body, "root:") || strings.Contains(body, "<script>alert") {
			t.Errorf("/source?%s: %d\n%s", q, st, body)
		}
	}
	// A hostile line, column or run shows no markup and marks nothing.
	st, body, _ = e.page(c, "GET", "/source?file=flows.halo&line=%3Cb%3E&col=-1&run=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E", nil)
	if st != 200 || strings.Contains(body, "<script>alert") || strings.Contains(body, `class="mark"`) || strings.Contains(body, "Back to the run") {
		t.Errorf("hostile source query: %d\n%s", st, body)
	}
}
