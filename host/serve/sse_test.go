package serve_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/host/serve"
)

type sseEvent struct {
	id   int
	name string
	data map[string]any
}

// sse reads a stream's events into a channel until it ends (then closes the channel).
func (e *env) sse(id string, lastID string) (*http.Response, <-chan sseEvent) {
	e.t.Helper()
	return e.ssePath("/api/runs/"+id+"/events", lastID)
}

// ssePath reads the stream at path.
func (e *env) ssePath(path string, lastID string) (*http.Response, <-chan sseEvent) {
	e.t.Helper()
	hdr := []string{"Accept", "text/event-stream"}
	if lastID != "" {
		hdr = append(hdr, "Last-Event-ID", lastID)
	}
	resp := e.req("GET", path, nil, hdr...)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		e.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := make(chan sseEvent, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id, _ = strconv.Atoi(line[4:])
			case strings.HasPrefix(line, "event: "):
				ev.name = line[7:]
			case strings.HasPrefix(line, "data: "):
				json.Unmarshal([]byte(line[6:]), &ev.data)
			}
		}
	}()
	return resp, ch
}

func next(t *testing.T, ch <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event in 20s")
	}
	return sseEvent{}
}

func drain(t *testing.T, ch <-chan sseEvent) []sseEvent {
	t.Helper()
	var out []sseEvent
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}

// A live stream gets each event as it happens, numbered; a client that reconnects with
// Last-Event-ID gets exactly the events after it; the stream ends when the run ends.
func TestSSELiveAndResume(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	resp, ch := e.sse(id, "")
	e.gate <- struct{}{} // A.one answers
	first := next(t, ch)
	if first.id != 1 || first.name != "llm" || first.data["seq"].(float64) != 1 || first.data["runId"] != id {
		t.Fatalf("first event %+v", first)
	}
	resp.Body.Close() // the client goes away after event 1
	_, ch2 := e.sse(id, "1")
	rest := drain(t, ch2)
	if len(rest) < 3 || rest[0].id != 2 || rest[len(rest)-1].name != "run" {
		t.Fatalf("resumed stream: %+v", rest)
	}
	for i, ev := range rest {
		if ev.id != i+2 {
			t.Errorf("event %d has id %d: ids skip or repeat", i, ev.id)
		}
	}
	// After the run: the stream replays from the record and ends.
	_, ch3 := e.sse(id, strconv.Itoa(rest[len(rest)-3].id))
	if got := drain(t, ch3); len(got) != 2 || got[1].name != "run" {
		t.Errorf("replay after %d: %+v", rest[len(rest)-3].id, got)
	}
	_, ch4 := e.sse(id, strconv.Itoa(rest[len(rest)-1].id))
	if got := drain(t, ch4); len(got) != 0 {
		t.Errorf("replay after the last: %+v", got)
	}
	if m := e.do("GET", "/api/runs/"+id+"/events", nil, 400, "Last-Event-ID", "x"); errCode(m) != "BAD_REQUEST" {
		t.Errorf("bad Last-Event-ID: %v", m)
	}
}

// A paused run's stream shows the paused event with its link and stays open; the signal
// continues it on the same stream, with the numbering going on.
func TestSSEAcrossPause(t *testing.T) {
	e := newEnv(t, opts{})
	id := e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Shop", "inputs": map[string]any{"id": "o1"}}, 200)["runId"].(string)
	_, ch := e.sse(id, "")
	var paused sseEvent
	for paused.name != "paused" {
		paused = next(t, ch)
	}
	if !strings.Contains(fmt.Sprint(paused.data["link"]), "/approve/") || paused.data["channel"] != "payment" {
		t.Fatalf("paused event %+v", paused)
	}
	if ev := next(t, ch); ev.name != "run" || ev.data["status"] != "paused" {
		t.Fatalf("after the paused event: %+v", ev)
	}
	select {
	case ev, ok := <-ch:
		t.Fatalf("the stream of a paused run went on: %+v %v", ev, ok)
	case <-time.After(200 * time.Millisecond):
	}
	e.do("POST", "/api/runs/"+id+"/signal", map[string]any{"channel": "payment", "payload": 5}, 202)
	rest := drain(t, ch)
	if len(rest) == 0 || rest[0].id != paused.id+2 || rest[len(rest)-1].data["status"] != "completed" {
		t.Errorf("after the signal: %+v", rest)
	}
}

// A client that opens streams and never reads them does not hold up runs or the server.
func TestSSEClientThatNeverReads(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	addr := strings.TrimPrefix(e.http.URL, "http://")
	var conns []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /api/runs/%s/events HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", id, addr)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	e.gate <- struct{}{}
	e.waitStatus(id, runtime.Completed)
	e.do("POST", "/api/runs?wait=10s", map[string]any{"pipeline": "Ask", "inputs": map[string]any{"x": "a"}}, 200)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run and the next request took %s beside streams nobody reads", d)
	}
}

// TestListChanges: GET /api/runs as a stream says each time a run starts, pauses, is
// answered or stops, for the client to read the list again.
func TestListChanges(t *testing.T) {
	e := newEnv(t, opts{gate: true})
	serve.SetListPoll(e.srv, time.Hour) // only this server's own changes wake the stream
	resp, ch := e.ssePath("/api/runs", "")
	defer resp.Body.Close()
	changed := func(what string) {
		t.Helper()
		if ev := next(t, ch); ev.name != "changed" {
			t.Fatalf("%s: event %q, want changed", what, ev.name)
		}
	}
	id := e.do("POST", "/api/runs", map[string]any{"pipeline": "Three", "inputs": map[string]any{"x": "a"}}, 202)["runId"].(string)
	changed("a run started")
	e.gate <- struct{}{}
	e.waitStatus(id, "completed")
	changed("a run completed")
	m := e.do("POST", "/api/runs?wait=20s", map[string]any{"pipeline": "Ask", "inputs": map[string]any{"x": "a"}}, 200)
	if m["status"] != "paused" {
		t.Fatalf("Ask: %v", m)
	}
	changed("a run paused")
	e.do("POST", "/api/runs/"+m["runId"].(string)+"/signal", map[string]any{"channel": "yield", "payload": "ok"}, 202)
	e.waitStatus(m["runId"].(string), "completed")
	changed("a paused run answered")
}

// TestListChangesOfOtherProcesses: a change another process makes in the store (here saved
// straight into it) reaches the runs list's stream at its next look.
func TestListChangesOfOtherProcesses(t *testing.T) {
	e := newEnv(t, opts{})
	serve.SetListPoll(e.srv, 50*time.Millisecond)
	resp, ch := e.ssePath("/api/runs", "")
	defer resp.Body.Close()
	now := time.Now().UTC()
	rec := &runtime.Record{RunID: "other1", Pipeline: "Three", Status: runtime.Completed, Inputs: map[string]any{}, Started: now, Updated: now}
	if err := e.store.Save(rec); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch); ev.name != "changed" {
		t.Fatalf("event %q, want changed", ev.name)
	}
}
