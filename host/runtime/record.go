package runtime

import (
	"context"
	"time"
)

// A Record is a run as a run store keeps it.
type Record struct {
	RunID    string         `json:"runId"`
	File     string         `json:"file,omitempty"`
	Pipeline string         `json:"pipeline"`
	Status   Status         `json:"status"`
	Inputs   map[string]any `json:"inputs"`
	Output   any            `json:"output"`
	Error    *ErrorInfo     `json:"error,omitempty"`
	Meta     Meta           `json:"meta"`
	// Data is context.data when the run stopped.
	Data   map[string]any `json:"data"`
	Events []Event        `json:"events"`
	// Resume says where a paused run goes on; nil for a finished run.
	Resume *ResumePoint `json:"resume,omitempty"`
	// Mocks records how many scripted answers each mocked target had used, so a resumed
	// test run goes on with the next one.
	Mocks   map[string]int `json:"mocks,omitempty"`
	Started time.Time      `json:"started"`
	Updated time.Time      `json:"updated"`

	// Recording is what the run's models answered, its tools returned and its people said,
	// unredacted, for halo replay (Runtime.Replay).
	Recording *Recording `json:"recording,omitempty"`
	// Seal, on a paused record, is what a resume verifies the record against (see Seal).
	Seal *Seal `json:"seal,omitempty"`
}

// A ResumePoint is where a paused run stopped.
type ResumePoint struct {
	// Stage is the index of the stage the run waits at (a yield, a listen); the payload
	// becomes its value.
	Stage int `json:"stage"`
	// Loops counts the passes each loop stage (by index) has made.
	Loops map[int]int `json:"loops,omitempty"`
	// Inputs and Outputs are the flowing values stages received and returned, by index, for
	// loops going back (and the answer their feedback quotes).
	Inputs  map[int]any `json:"inputs,omitempty"`
	Outputs map[int]any `json:"outputs,omitempty"`
	// Agent, for a run waiting for approval, is the agent call that waits: its conversation
	// so far and the call put to a person. Stage is that call's stage.
	Agent *AgentPause `json:"agent,omitempty"`
}

// A RunStore keeps run records: the runtime saves a run's record when the run stops (it
// completes, fails or pauses) and loads a paused run's record to continue it. The runtime
// never writes records itself: host/runstore's stores do (SQLite in .halo/runs, PostgreSQL).
type RunStore interface {
	// Load reads the record of run id; an unknown id is a RUN_RECORD error.
	Load(id string) (*Record, error)
	// Save writes rec, replacing the run's earlier record.
	Save(rec *Record) error
	// Latest returns the id of the most recently updated paused run (`halo resume FILE last`).
	Latest() (string, error)
	// SealKey returns the key a paused record's seal is made with (see Seal): one the store
	// keeps, the same for every process that uses it.
	SealKey() ([]byte, error)
}

// An IDMaker is a RunStore that makes the ids of the runs it keeps (the embedded store makes
// ids it finds their rows by quickly). New uses it when Config.NewID is nil.
type IDMaker interface {
	// NewRunID returns the id of a run that starts: unique in the store, and hard to guess.
	NewRunID() string
}

// Running is the status of a run that has started and not stopped yet. The runtime never
// saves it itself: a Tracker's store does, so that others see the run while it runs.
const Running Status = "running"

// A Tracker is a RunStore that keeps runs while they run, not only once they stop: halo
// serve's stores, read by other requests and by other processes sharing the store.
type Tracker interface {
	RunStore
	// Begin is called as a run starts (rec new, with Status Running and no events) and as a
	// paused run is about to be continued (rec as Load returned it, Status Paused). It
	// returns the context the run goes on with, which the tracker may cancel (the run is
	// cancelled, or lost), or an error, and then the run does not go on: for a paused run,
	// because another signal took it first. Every successful Begin is followed by a Save of
	// the run's record when it stops.
	Begin(ctx context.Context, rec *Record) (context.Context, error)
}
