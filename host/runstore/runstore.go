// Package runstore owns the contract between `halo serve` and the stores that keep its runs:
// the Store interface (a runtime.RunStore that also keeps runs while they run, their live
// events, who holds each run, and the key approval links are signed with), the types its
// queries use, and Folder, the embedded store under .halo/runs that one process uses.
// host/runstore/postgres is the store several replicas share; host/runstore/runstoretest
// checks any Store against the contract.
package runstore

import (
	"context"
	"errors"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/runtime"
)

// Stable error codes of run stores.
const (
	// CodeTaken: a paused run was continued, or a running run saved, by another signal or
	// another process first.
	CodeTaken = "RUN_TAKEN"
	// CodeBusy: another process uses the folder store.
	CodeBusy = "STORE_BUSY"
	// CodeStore: the store cannot be opened or does not answer.
	CodeStore = "STORE"
	// CodeHostLost: the process running a run stopped answering (its lease ran out); the run
	// was marked failed by another.
	CodeHostLost = "HOST_LOST"
	// CodeRunning: a run that is running cannot be removed.
	CodeRunning = "RUN_RUNNING"
)

// An Error is a store failure with a stable code.
type Error = errcode.Error

// Errorf makes an Error.
func Errorf(code, format string, args ...any) *Error { return errcode.New(code, format, args...) }

// IsNotFound reports whether err says a run does not exist.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// ErrNotFound is wrapped by every store's error for an unknown run id.
var ErrNotFound = errors.New("no such run")

// A Signal is what continued a paused run, as a store may log it.
type Signal struct {
	Channel string
	Payload any
	// Via says how it came: "api", "link", "mcp".
	Via string
}

// A Page is one page of runs, newest first (by start time, then id).
type Page struct {
	Runs []Summary `json:"runs"`
	// Next is the cursor of the next page; "" on the last one.
	Next string `json:"next,omitempty"`
}

// A Summary is a run as a list shows it.
type Summary struct {
	RunID    string             `json:"runId"`
	File     string             `json:"file,omitempty"`
	Pipeline string             `json:"pipeline"`
	Status   runtime.Status     `json:"status"`
	Started  time.Time          `json:"started"`
	Updated  time.Time          `json:"updated"`
	Waiting  string             `json:"waitingFor,omitempty"`
	Error    *runtime.ErrorInfo `json:"error,omitempty"`
	// Cost and Violations are context.meta's cost and number of violations as the run's
	// record last saved them (when it started, paused or stopped).
	Cost       float64 `json:"cost"`
	Violations int     `json:"violations"`
	// TokensIn and TokensOut are the tokens its model calls read and wrote. Unpriced says
	// one of them was of a model the price table does not know: the run cost more than
	// Cost, by how much is unknown.
	TokensIn  int64 `json:"tokensIn"`
	TokensOut int64 `json:"tokensOut"`
	Unpriced  bool  `json:"unpriced,omitempty"`
}

// SummaryOf returns rec's summary.
func SummaryOf(rec *runtime.Record) Summary {
	s := Summary{RunID: rec.RunID, File: rec.File, Pipeline: rec.Pipeline, Status: rec.Status, Started: rec.Started, Updated: rec.Updated, Error: rec.Error,
		Cost: rec.Meta.Cost, Violations: len(rec.Meta.Violations)}
	s.TokensIn, s.TokensOut, s.Unpriced = usageOf(rec.Meta.Calls)
	if rec.Status == runtime.Paused && rec.Meta.Paused != nil {
		s.Waiting = rec.Meta.Paused.WaitingFor
	}
	return s
}

// A Note says that something changed in the store, for a process that did not change it:
// another replica's run had an event, stopped, or is asked to cancel.
type Note struct {
	// RunID is the run that changed; "" means any run may have (Listen has just started
	// listening, or listens again after a lost connection).
	RunID string
	// Kind is NoteEvent, NoteSaved or NoteCancel.
	Kind string
}

// The kinds of Note.
const (
	NoteEvent  = "event"
	NoteSaved  = "saved"
	NoteCancel = "cancel"
)

// A Store keeps halo serve's runs. Every method is safe for concurrent use. A run is held
// by the process that runs it, from Start or Claim until the Save of its record as it stops;
// Save refuses to write a run held by another process.
type Store interface {
	runtime.RunStore
	// Start saves rec, a run that starts (Status running), as held by this process.
	Start(ctx context.Context, rec *runtime.Record) error
	// Claim takes the paused run rec (as Load returned it) for this process, to continue it
	// with sig: of several claims of one paused record, in this process or others, exactly
	// one succeeds; the others get CodeTaken, as does a claim of a record that changed
	// since it was loaded.
	Claim(ctx context.Context, rec *runtime.Record, sig Signal) error
	// AppendEvent keeps event number seq (from 1, as in the record's events) of a run this
	// process holds, for readers in other processes.
	AppendEvent(ctx context.Context, runID string, seq int, e runtime.Event) error
	// Events returns the events of run id after number after, and the run's status.
	Events(ctx context.Context, id string, after int) ([]runtime.Event, runtime.Status, error)
	// List returns one page of the runs q selects, newest first.
	List(ctx context.Context, q Query) (Page, error)
	// Delete removes the records of runs ids (with their events, signals and links) and
	// returns the ids it removed; a running run is refused (CodeRunning) and nothing is
	// removed. An unknown id is passed over.
	Delete(ctx context.Context, ids []string) ([]string, error)
	// Prune removes the finished runs p selects and returns how many.
	Prune(ctx context.Context, p Prune) (int, error)
	// Keep renews the hold of this process on the runs it runs, and returns the ids of those
	// someone asked to cancel.
	Keep(ctx context.Context) (cancel []string, err error)
	// Expire fails (CodeHostLost) every running run whose holder stopped renewing it in
	// time, keeping its events so far, and returns their ids.
	Expire(ctx context.Context) ([]string, error)
	// RequestCancel asks the process that holds running run id to cancel it.
	RequestCancel(ctx context.Context, id string) error
	// UseLink records that the approval link with the given id was used for run runID;
	// false when it was used before.
	UseLink(ctx context.Context, linkID, runID string) (bool, error)
	// Listen calls fn with every Note from other processes until ctx ends; a store that one
	// process uses alone returns at once.
	Listen(ctx context.Context, fn func(Note)) error
	// Secret returns the key approval links are signed with, made by gen and kept on first
	// use, so every process sharing the store signs alike.
	Secret(ctx context.Context, gen func() ([]byte, error)) ([]byte, error)
	// Close releases the store.
	Close() error
}

// LoseRecord makes rec the record of a run whose process was lost: failed with
// CodeHostLost, its events so far kept.
func LoseRecord(rec *runtime.Record, now time.Time, why string) {
	rec.Status = runtime.Failed
	rec.Error = &runtime.ErrorInfo{Code: CodeHostLost, Message: why}
	rec.Resume = nil
	rec.Meta.Paused = nil
	rec.Updated = now.UTC()
	rec.Events = append(rec.Events, runtime.Event{Type: "run", Time: rec.Updated, RunID: rec.RunID, Status: runtime.Failed, Error: rec.Error})
}

func storeErr(what string, err error) error {
	return &Error{Code: CodeStore, Message: what + ": " + err.Error(), Err: err}
}
