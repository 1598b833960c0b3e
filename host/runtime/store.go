package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/internal/safefile"
	"halolang.dev/halo/pkgmgr/statedir"
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
// (.halo/runs), one file per run. Every file operation goes through the folder opened as an
// os.Root, and a .halo or .halo/runs that is a symbolic link (a cloned repository's trap) is
// refused with STATE_DIR_UNSAFE, so nothing is read or written through a link out of the
// project.
//
// A record is written whole to a new file, synced, and only then named <runId>.json (a
// new run's file, on Linux, is made with no name and linked there; a record replacing one
// has a temporary name and is renamed over it), so no reader ever sees part of one, and
// <runId>.json only ever gets a file already on disk: after a process is killed, a power
// cut or an OS crash, it holds a whole record. A save hands the
// record to a commit, which writes every record saved since the one before and syncs them
// together (their files at once, or, for many on Linux, the whole filesystem with one
// syncfs); a run saved several times before a commit is written once. With GroupCommit,
// commits start at most every 20 ms unless someone waits for one. When a save returns:
//
//   - a paused record (someone will continue the run) is on disk before Save returns, as is
//     every record of a Store without GroupCommit, and every record SaveSynced writes;
//   - with GroupCommit, Save returns any other record (completed, failed, running) at once:
//     Load, Latest and Newest of this Store read it, and it is on disk a commit later (a
//     few milliseconds and a sync), and always once Sync or Close returns. A process that is
//     killed, a power cut or an OS crash in between may lose it: the record before it, or
//     none, stands in its place.
//
// With Log, the records of a run that has not paused are lines of a run log instead (see Log):
// the log is appended to and synced by the commit, so it too holds whole records, but for
// a last line a crash cut short, which readers pass over.
//
// A Store with GroupCommit commits in a goroutine of its own while it has records to
// commit; its owner must call Close once it has saved its last record.
type Store struct {
	Dir string
	// Root, when set, is Dir already opened (statedir.OpenFolder): a store used for many
	// records opens its folder once. Nil means each operation opens Dir.
	Root *os.Root
	// GroupCommit lets Save return a record that is not paused before it is on disk (see
	// above). Whoever sets it calls Close.
	GroupCommit bool
	// Log puts the records of a run that has not paused (running, completed, failed, ...)
	// on lines of a run log of this Store's own, log/<time>-<random>.jsonl in Dir, instead
	// of in <runId>.json: a commit of many runs then writes and syncs one file. A paused
	// record, and every later record of a run that had one (or whose <runId>.json this
	// Store loaded), is a file as without it, and the file wins over the log. Load, Newest
	// and Logged read the logs of every Store. Whoever sets it calls Close, which closes the
	// log. halo mcp's and halo serve's stores, which save a run for every call, set it.
	Log bool
	// OnLog, when set, is told where each record this Store logs is, once it is on disk
	// (for LoadLogged): halo serve's folder store keeps an index. It is called from the
	// commit, holding the Store's lock, so it must not call the Store.
	OnLog func(id string, at LogPos)

	commits
	// recordSize is the size to make the next record's buffer: the last one's and a bit, at
	// most maxRecordGuess (one large record must not make every later one hold as much).
	recordSize atomic.Int64
}

const maxRecordGuess = 64 << 10

// validID reports whether id can be a run id: 1 to 128 ASCII letters, digits, '_' and '-',
// not starting with '_' or '-' (so it is a plain file name, never hidden). Checked at every
// save and load, by hand: a regular expression cost a few percent of halo mcp's time.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

func checkID(id string) error {
	if !validID(id) {
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

// Save writes rec, replacing the run's earlier record. A paused record, or any record of a
// Store without GroupCommit, is on disk when Save returns; with GroupCommit, any other
// record is in place (readable by anyone) and goes to disk with the next commit.
func (s *Store) Save(rec *Record) error {
	wait, err := s.Write(rec)
	if err != nil {
		return err
	}
	if rec.Status == Paused || !s.GroupCommit {
		return wait()
	}
	return nil
}

// SaveSynced writes rec and returns once it is on disk, whatever its status: halo serve's
// folder store saves a claimed run this way, so that after a power cut the run is not found
// paused again and run twice.
func (s *Store) SaveSynced(rec *Record) error {
	wait, err := s.Write(rec)
	if err != nil {
		return err
	}
	return wait()
}

// Write hands rec to a commit, readable at once by this Store's Load: with GroupCommit the
// commit goroutine writes it, without it the wait does.
// wait returns once it is on disk (or the commit failed). Save and SaveSynced are Write and,
// when they promise it, wait; a store that keeps an index of records (halo serve's) updates
// it between the two.
func (s *Store) Write(rec *Record) (wait func() error, err error) {
	if err := checkID(rec.RunID); err != nil {
		return nil, err
	}
	// The bytes are kept by the commit until written, so each record gets its own buffer,
	// made as large as the last record was (records of one store are much alike).
	b, err := appendRecord(make([]byte, 0, s.recordSize.Load()), rec)
	if err != nil {
		return nil, fmt.Errorf("run %s: encode record: %w", rec.RunID, err)
	}
	b = append(b, '\n')
	s.recordSize.Store(int64(min(len(b)+len(b)/8, maxRecordGuess)))
	if s.GroupCommit {
		if err := s.ready(); err != nil {
			return nil, fmt.Errorf("run %s: %w", rec.RunID, err)
		}
	}
	p, err := s.put(rec.RunID, rec.Status, b)
	if err != nil {
		return nil, fmt.Errorf("run %s: save record: %w", rec.RunID, err)
	}
	return func() error {
		if err := s.wait(p); err != nil {
			if errcode.Code(err) != "" { // the folder refused (STATE_DIR_UNSAFE, RUN_RECORD)
				return fmt.Errorf("run %s: %w", rec.RunID, err)
			}
			return &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: the record could not be written to disk: %v", rec.RunID, err), Err: err}
		}
		return nil
	}, nil
}

// readRecord reads a record file of at most maxLogLine bytes (lineCap in tests): a record is
// rarely more than a few megabytes, and the folder of a cloned repository may hold anything,
// so a larger one, or one that is not a regular file, is refused without being read.
func (s *Store) readRecord(root *os.Root, name string) ([]byte, error) {
	limit := int64(maxLogLine)
	if s.commits.lineCap > 0 {
		limit = int64(s.commits.lineCap)
	}
	return safefile.ReadIn(root, name, limit)
}

// Load reads the record of run id: the one saved and not yet on disk, else <id>.json, else
// its last line in the run logs.
func (s *Store) Load(id string) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if b := s.unsaved(id); b != nil {
		if rec := decodeRecord(b, id); rec != nil {
			return rec, nil
		}
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
	b, err := s.readRecord(root, id+".json")
	if errors.Is(err, fs.ErrNotExist) {
		rec, err := s.loadLogged(root, id)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, errorf(CodeRun, "no run %s in %s", id, s.Dir)
		}
		return rec, nil
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
	if s.Log {
		s.commits.mu.Lock()
		s.hasFile(id)
		s.commits.mu.Unlock()
	}
	return &rec, nil
}

// decodeRecord reads the record of run id from b: nil when b is not one.
func decodeRecord(b []byte, id string) *Record {
	var rec Record
	if json.Unmarshal(b, &rec) != nil || rec.RunID != id {
		return nil
	}
	return &rec
}

// RecordIDs returns the run ids of the records among a records folder's entries.
func RecordIDs(entries []fs.DirEntry) []string {
	var ids []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && e.Type().IsRegular() && validID(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// ids returns the run ids of the records in the folder and of those not yet on disk; none
// when there are none.
func (s *Store) ids() ([]string, error) {
	unsaved := s.unsavedIDs()
	var ids []string
	for id := range unsaved {
		ids = append(ids, id)
	}
	root, done, err := s.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return ids, nil
	}
	if err != nil {
		return nil, err
	}
	defer done()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: err.Error(), Err: err}
	}
	for _, id := range RecordIDs(entries) {
		if !unsaved[id] {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// newest returns the id of the most recently updated record that keep accepts, among the
// <id>.json records and, with logs, the run logs' too.
func (s *Store) newest(keep func(*Record) bool, logs bool) (string, error) {
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	best, bestTime := "", time.Time{}
	consider := func(rec *Record, _ LogPos) {
		if keep(rec) && (best == "" || rec.Updated.After(bestTime)) {
			best, bestTime = rec.RunID, rec.Updated
		}
	}
	for _, id := range ids {
		if rec, err := s.Load(id); err == nil { // unreadable records are passed over
			consider(rec, LogPos{})
		}
	}
	if logs {
		if err := s.Logged(consider); err != nil {
			return "", err
		}
	}
	return best, nil
}

// Latest returns the id of the most recently updated paused run, for `halo resume FILE
// last`.
func (s *Store) Latest() (string, error) {
	best, err := s.newest(func(rec *Record) bool { return rec.Status == Paused }, false)
	if err == nil && best == "" {
		err = errorf(CodeRun, "no paused run in %s", s.Dir)
	}
	return best, err
}

// Newest returns the id of the most recently updated run of any status, for `halo replay
// FILE last`. Unreadable records are passed over.
func (s *Store) Newest() (string, error) {
	best, err := s.newest(func(*Record) bool { return true }, true)
	if err == nil && best == "" {
		err = errorf(CodeRun, "no run in %s", s.Dir)
	}
	return best, err
}
