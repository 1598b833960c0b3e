package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A Record is a run as saved in .halo/runs/<runId>.json.
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

// A Store keeps run records as JSON files in one folder (.halo/runs).
type Store struct {
	Dir string
}

var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`) })

func (s *Store) path(id string) (string, error) {
	if !runIDPattern().MatchString(id) {
		return "", errorf(CodeRun, "%q is not a run id", id)
	}
	return filepath.Join(s.Dir, id+".json"), nil
}

// Save writes rec atomically: to a temporary file in the same folder, then renamed over the
// record, so a reader never sees half a record and a crash leaves the old one.
func (s *Store) Save(rec *Record) error {
	p, err := s.path(rec.RunID)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("run records: %w", err)
	}
	f, err := os.CreateTemp(s.Dir, "."+rec.RunID+".*.tmp")
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.RunID, err)
	}
	tmp := f.Name()
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("run %s: save record: %w", rec.RunID, werr)
	}
	return nil
}

// Load reads the record of run id.
func (s *Store) Load(id string) (*Record, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(CodeRun, "no run %s in %s", id, s.Dir)
	}
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: %v", id, err), Err: err}
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: unreadable record %s: %v", id, p, err), Err: err}
	}
	if rec.RunID != id {
		return nil, errorf(CodeRun, "run %s: the record in %s is of run %s", id, p, rec.RunID)
	}
	return &rec, nil
}

// Latest returns the id of the most recently updated paused run, for `halo resume FILE
// last`.
func (s *Store) Latest() (string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", &Error{Code: CodeRun, Message: err.Error(), Err: err}
	}
	best, bestTime := "", time.Time{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !runIDPattern().MatchString(id) {
			continue
		}
		rec, err := s.Load(id)
		if err != nil || rec.Status != Paused {
			continue
		}
		if best == "" || rec.Updated.After(bestTime) {
			best, bestTime = id, rec.Updated
		}
	}
	if best == "" {
		return "", errorf(CodeRun, "no paused run in %s", s.Dir)
	}
	return best, nil
}

// Newest returns the id of the most recently updated run of any status, for `halo replay
// FILE last`. Unreadable records are passed over.
func (s *Store) Newest() (string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", &Error{Code: CodeRun, Message: err.Error(), Err: err}
	}
	best, bestTime := "", time.Time{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !runIDPattern().MatchString(id) {
			continue
		}
		if rec, err := s.Load(id); err == nil && (best == "" || rec.Updated.After(bestTime)) {
			best, bestTime = id, rec.Updated
		}
	}
	if best == "" {
		return "", errorf(CodeRun, "no run in %s", s.Dir)
	}
	return best, nil
}
