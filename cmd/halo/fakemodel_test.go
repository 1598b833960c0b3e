package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// fakeModel is the testscript command `fakemodel REPLIES`: it serves an OpenAI-compatible
// chat API on 127.0.0.1 for the rest of the script, answering each request with the next
// reply of the JSON array in the file REPLIES (a chat.completion object each, as the model
// would write it, duplicate keys and all: the replies are sent as written) and 500 once
// they are used up. Each request body is appended, compacted to one line, to requests.jsonl.
// It sets OPENAI_BASE_URL and OPENAI_API_KEY, which ptyanswer passes on.
func fakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakemodel REPLIES")
	}
	var replies []json.RawMessage
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &replies); err != nil {
		ts.Fatalf("fakemodel: %s: %v", args[0], err)
	}
	log := ts.MkAbs("requests.jsonl")
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		mu.Lock()
		defer mu.Unlock()
		var line bytes.Buffer
		if json.Compact(&line, body) != nil {
			line.Write(body)
		}
		line.WriteByte('\n')
		if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			f.Write(line.Bytes())
			f.Close()
		}
		w.Header().Set("Content-Type", "application/json")
		if n >= len(replies) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error": {"message": "fakemodel: no more replies"}}`)
			return
		}
		w.Write(replies[n])
		n++
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	ts.Setenv("OPENAI_API_KEY", "sk-fake")
}
