package index

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"halolang.dev/halo/host/store"
)

// At a terminal the bar shows the rate and the time left once a phase has run a while, and
// the embedding phase counts batches; a wait for another process is a line of its own.
func TestProgressBarRateAndTimeLeft(t *testing.T) {
	var buf bytes.Buffer
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := newProgress(&buf, "Notes", true, clock)

	p.waiting()
	p.report(store.Progress{Phase: "index", FilesTotal: 40})
	now = now.Add(2 * time.Second)
	p.report(store.Progress{Phase: "index", Files: 10, FilesTotal: 40, Bytes: 3 << 20, Chunks: 120})
	now = now.Add(time.Second)
	p.report(store.Progress{Phase: "embed", BatchesTotal: 8})
	now = now.Add(4 * time.Second)
	p.report(store.Progress{Phase: "embed", Batches: 2, BatchesTotal: 8})
	p.done()

	got := buf.String()
	for _, want := range []string{
		"Notes: waiting for another process that is indexing it\n",
		"\r\x1b[KNotes [######------------------] 10/40 files, 3.0 MB, 120 chunks, 5.0 files/s, 6s left",
		"\r\x1b[KNotes [######------------------] 2/8 batches, 0.5 batches/s, 12s left",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal lacks %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("done left the bar on the line: %q", got)
	}
}

// Not at a terminal: one plain line as each phase starts, never a bar or an escape.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "Handbook", false, nil)
	p.report(store.Progress{Phase: "scan", FilesTotal: 1})
	p.report(store.Progress{Phase: "index", Files: 1, FilesTotal: 1})
	p.report(store.Progress{Phase: "embed", BatchesTotal: 3})
	p.report(store.Progress{Phase: "embed", Batches: 3, BatchesTotal: 3})
	p.done()
	if got, want := buf.String(), "Handbook: 1 file to check\nHandbook: embedding in 3 batches\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
