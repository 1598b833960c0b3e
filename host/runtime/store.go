package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

	"github.com/halo-lang/halo/pkgmgr/statedir"
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

// A RunStore keeps run records: the runtime saves a run's record when the run stops (it
// completes, fails or pauses) and loads a paused run's record to continue it. Store, JSON
// files in .halo/runs, is the default; halo serve's stores (host/runstore) also keep runs
// while they run, in a folder or in PostgreSQL.
type RunStore interface {
	// Load reads the record of run id; an unknown id is a RUN_RECORD error.
	Load(id string) (*Record, error)
	// Save writes rec, replacing the run's earlier record.
	Save(rec *Record) error
	// Latest returns the id of the most recently updated paused run (`halo resume FILE last`).
	Latest() (string, error)
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

// A Store is the file run store: it keeps run records as JSON files in one folder
// (.halo/runs), one file per run, each written whole. Every file operation goes through the
// folder opened as an os.Root, and a .halo or .halo/runs that is a symbolic link (a cloned
// repository's trap) is refused with STATE_DIR_UNSAFE, so nothing is read or written
// through a link out of the project.
type Store struct {
	Dir string
	// Root, when set, is Dir already opened (statedir.OpenFolder): a store used for many
	// records opens its folder once. Nil means each operation opens Dir.
	Root *os.Root
}

var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`) })

func checkID(id string) error {
	if !runIDPattern().MatchString(id) {
		return errorf(CodeRun, "%q is not a run id", id)
	}
	return nil
}

// OpenRunsFolder opens dir as a records folder (made when create is set). A dir named
// .halo/runs is opened through pkgmgr/statedir, which refuses a .halo or runs that is a
// symbolic link; any other dir (tests, --dir) must itself not be a link.
func OpenRunsFolder(dir string, create bool) (*os.Root, error) {
	if filepath.Base(dir) == "runs" && filepath.Base(filepath.Dir(dir)) == statedir.Name {
		return statedir.OpenFolder(filepath.Dir(filepath.Dir(dir)), "runs", create)
	}
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
		return nil, &statedir.Error{Path: dir, Problem: "is a symbolic link or not a folder"}
	}
	return os.OpenRoot(dir)
}

// root returns the folder to work in, and how to release it.
func (s *Store) root(create bool) (*os.Root, func(), error) {
	if s.Root != nil {
		return s.Root, func() {}, nil
	}
	r, err := OpenRunsFolder(s.Dir, create)
	if err != nil {
		return nil, nil, storeError(s.Dir, err)
	}
	return r, func() { r.Close() }, nil
}

// storeError gives a folder problem the code RUN_RECORD, or statedir's own.
func storeError(dir string, err error) error {
	var se *statedir.Error
	if errors.As(err, &se) {
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Code: CodeRun, Message: fmt.Sprintf("no run records in %s", dir), Err: err}
	}
	return &Error{Code: CodeRun, Message: fmt.Sprintf("run records %s: %v", dir, err), Err: err}
}

// Save writes rec atomically: to a temporary file in the same folder, then renamed over the
// record, so a reader never sees half a record and a crash leaves the old one.
func (s *Store) Save(rec *Record) error {
	if err := checkID(rec.RunID); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	root, done, err := s.root(true)
	if err != nil {
		return err
	}
	defer done()
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + rec.RunID + "." + hex.EncodeToString(rnd[:]) + ".tmp"
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("run %s: %w", rec.RunID, err)
	}
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, rec.RunID+".json")
	}
	if werr != nil {
		root.Remove(tmp)
		return fmt.Errorf("run %s: save record: %w", rec.RunID, werr)
	}
	return nil
}

// Load reads the record of run id.
func (s *Store) Load(id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	root, done, err := s.root(false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errorf(CodeRun, "no run %s in %s", id, s.Dir)
		}
		return nil, err
	}
	defer done()
	p := filepath.Join(s.Dir, id+".json")
	b, err := root.ReadFile(id + ".json")
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

// ids returns the run ids of the records in the folder; none when it does not exist.
func (s *Store) ids() ([]string, error) {
	root, done, err := s.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer done()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: err.Error(), Err: err}
	}
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && runIDPattern().MatchString(id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// newest returns the id of the most recently updated record that keep accepts.
func (s *Store) newest(keep func(*Record) bool) (string, error) {
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	best, bestTime := "", time.Time{}
	for _, id := range ids {
		rec, err := s.Load(id)
		if err != nil || !keep(rec) {
			continue // unreadable records are passed over
		}
		if best == "" || rec.Updated.After(bestTime) {
			best, bestTime = id, rec.Updated
		}
	}
	return best, nil
}

// Latest returns the id of the most recently updated paused run, for `halo resume FILE
// last`.
func (s *Store) Latest() (string, error) {
	best, err := s.newest(func(rec *Record) bool { return rec.Status == Paused })
	if err == nil && best == "" {
		err = errorf(CodeRun, "no paused run in %s", s.Dir)
	}
	return best, err
}

// Newest returns the id of the most recently updated run of any status, for `halo replay
// FILE last`. Unreadable records are passed over.
func (s *Store) Newest() (string, error) {
	best, err := s.newest(func(*Record) bool { return true })
	if err == nil && best == "" {
		err = errorf(CodeRun, "no run in %s", s.Dir)
	}
	return best, err
}
