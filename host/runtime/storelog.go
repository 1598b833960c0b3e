package runtime

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	goruntime "runtime"
	"strings"
	"time"

	"halolang.dev/halo/pkgmgr/statedir"
)

// The run log: with Store.Log, the records of runs that have not paused are lines of a log
// file rather than files of their own. A commit of many runs then writes and syncs
// one file, not a file per run: making a named file (an inode, a name in a folder of tens of
// thousands, an orphan-list entry for a file made without a name) was a quarter of halo
// mcp's time per call under load.
//
// Each Store writes logs of its own, LogFolder/<UTC time>-<random>.jsonl, appended to and
// never rewritten, so processes sharing a records folder never write to one file. A line
// is one whole record, as <runId>.json would hold it. After a crash the last line of a log
// may be cut short; readers pass over lines that are not a record, and the Store that
// wrote it starts a new log rather than append after it.

// LogFolder is the folder, inside a records folder, that holds the run logs.
const LogFolder = "log"

// logExt ends the name of a run log.
const logExt = ".jsonl"

// maxLogSize is the size from which a Store starts a new log, so that no log grows without
// end: a log is what a user moves, compresses or removes.
const maxLogSize = 64 << 20

// logPrefix returns how the line of run id's record begins: the encoder writes runId first,
// and a run id needs no escaping.
func logPrefix(id string) []byte {
	return []byte(`{"runId":"` + id + `",`)
}

// appendLog writes the records of recs, one line each, at the end of this Store's log and
// syncs it, then tells OnLog where each is. On failure the log is closed: the next commit
// starts a new one, so a line cut short by a failed write stays the last line of its log.
func (s *Store) appendLog(root *os.Root, recs []*file, syncFile func(*os.File) error) error {
	c := &s.commits
	size := 0
	for _, f := range recs {
		size += len(f.p.data)
	}
	limit := int64(maxLogSize)
	if c.logLimit > 0 {
		limit = c.logLimit
	}
	if c.logf != nil && c.logSize > 0 && c.logSize+int64(size) > limit {
		c.logf.Close()
		c.logf = nil
	}
	if c.logf == nil {
		if err := s.openLog(root, syncFile); err != nil {
			return err
		}
	}
	data := recs[0].p.data
	if len(recs) > 1 {
		data = make([]byte, 0, size)
		for _, f := range recs {
			data = append(data, f.p.data...)
		}
	}
	_, err := c.logf.Write(data)
	if err == nil {
		if syncFile != nil {
			err = syncFile(c.logf)
		} else {
			err = c.logf.Sync()
		}
	}
	if err != nil {
		c.logf.Close()
		c.logf = nil
		return err
	}
	start := c.logSize
	c.logSize += int64(size)
	if s.OnLog != nil {
		// Under c.mu, so that a run saved paused meanwhile (which then has a file, and whose
		// owner forgets where it was logged) is not said to be in the log after that.
		c.mu.Lock()
		for _, f := range recs {
			n := len(f.p.data) - 1 // without the newline
			if !c.files[f.id] {
				s.OnLog(f.id, LogPos{Log: c.logName, Offset: start, Size: n})
			}
			start += int64(n) + 1
		}
		c.mu.Unlock()
	}
	return nil
}

// openLog starts a new log of this Store and makes its name durable.
func (s *Store) openLog(root *os.Root, syncFile func(*os.File) error) error {
	c := &s.commits
	made := false
	if err := root.Mkdir(LogFolder, 0o755); err == nil {
		made = true
	} else if !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := checkLogFolder(root, s.Dir); err != nil {
		return err
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	name := path.Join(LogFolder, time.Now().UTC().Format("20060102T150405.000000000Z")+"-"+hex.EncodeToString(rnd[:])+logExt)
	f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	// The log's name, and the log folder's when it is new, reach the disk before any record
	// is said to be there.
	dirs := []string{LogFolder}
	if made {
		dirs = append(dirs, ".")
	}
	for _, d := range dirs {
		if err := syncDir(root, d); err != nil {
			f.Close()
			root.Remove(name)
			return err
		}
	}
	c.logf, c.logName, c.logSize = f, path.Base(name), 0
	return nil
}

// syncDir syncs the folder name in root, where folders can be synced.
func syncDir(root *os.Root, name string) error {
	if goruntime.GOOS == "windows" { // Windows cannot sync a folder; its journal keeps the names
		return nil
	}
	d, err := root.Open(name)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// checkLogFolder refuses a log folder that is a symbolic link or not a folder: a cloned
// repository's .halo/runs/log pointing elsewhere in the project must not receive records
// nor supply them.
func checkLogFolder(root *os.Root, dir string) error {
	fi, err := root.Lstat(LogFolder)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &statedir.Error{Path: path.Join(dir, LogFolder), Problem: "is a symbolic link or not a folder"}
	}
	return nil
}

// closeLog closes this Store's log, once its last commit is done.
func (s *Store) closeLog() error {
	c := &s.commits
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.logf == nil {
		return nil
	}
	err := c.logf.Close()
	c.logf = nil
	return err
}

// logNames returns the names of the logs in root, oldest first (a log's name begins with
// the time it was started); none when there is no log folder.
func logNames(root *os.Root, dir string) ([]string, error) {
	if err := checkLogFolder(root, dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := fs.ReadDir(root.FS(), LogFolder)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), logExt) && !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// maxLogLine is the longest line readers take from a log, and the largest record file Load
// reads: a record is rarely more than a few megabytes, and a log in a cloned repository may
// be anything. A longer line is passed over without being held in memory whole.
const maxLogLine = 256 << 20

// eachLogLine calls fn with every line of every log in root, oldest log first, with where
// it is, until fn returns false. Lines longer than maxLine (maxLogLine when 0) are passed over.
func eachLogLine(root *os.Root, dir string, maxLine int, fn func(at LogPos, line []byte) bool) error {
	if maxLine <= 0 {
		maxLine = maxLogLine
	}
	names, err := logNames(root, dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		more, err := eachLineOf(root, name, maxLine, fn)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// eachLineOf calls fn with every line of the log name, as eachLogLine does; false once fn
// has returned false.
func eachLineOf(root *os.Root, name string, maxLine int, fn func(at LogPos, line []byte) bool) (bool, error) {
	f, err := root.Open(path.Join(LogFolder, name))
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	var start, pos int64 // where line starts; how far the log is read
	long := false        // the line is over maxLine: passed over
	for {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		ended := len(chunk) > 0 && chunk[len(chunk)-1] == '\n'
		if ended {
			chunk = chunk[:len(chunk)-1]
		}
		if !long && len(line)+len(chunk) > maxLine {
			long, line = true, line[:0]
		}
		if !long {
			line = append(line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue // more of the same line
		}
		// The line ended, or the log did (a last line without its newline: cut short).
		if !long && len(line) > 0 && !fn(LogPos{Log: name, Offset: start, Size: len(line)}, line) {
			return false, nil
		}
		line, long, start = line[:0], false, pos
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
	}
}

// A LogPos is where a record is in the run logs: which log, and the line's offset and size.
type LogPos struct {
	Log    string
	Offset int64
	Size   int
}

// loadLogged reads run id's record from the logs: its last line there, or nil.
func (s *Store) loadLogged(root *os.Root, id string) (*Record, error) {
	prefix := logPrefix(id)
	var found *Record
	err := eachLogLine(root, s.Dir, s.commits.lineCap, func(_ LogPos, line []byte) bool {
		if bytes.HasPrefix(line, prefix) {
			if rec := decodeRecord(line, id); rec != nil {
				found = rec
			}
		}
		return true
	})
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: run logs in %s: %v", id, s.Dir, err), Err: err}
	}
	return found, nil
}

// Logged calls fn with every record in the folder's run logs and where it is, oldest log
// first (a run logged twice, as after a failed sync, comes twice: the later one counts).
// Lines that are not a whole record (the end of a log cut short by a crash) are passed
// over. halo serve's folder store lists them beside the <runId>.json records.
func (s *Store) Logged(fn func(rec *Record, at LogPos)) error {
	root, done, err := s.root(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	err = eachLogLine(root, s.Dir, s.commits.lineCap, func(at LogPos, line []byte) bool {
		var rec Record
		if json.Unmarshal(line, &rec) == nil && validID(rec.RunID) {
			fn(&rec, at)
		}
		return true
	})
	if err != nil {
		return storeError(s.Dir, err)
	}
	return nil
}

// LoadLogged reads run id's record where Logged or OnLog said it is, unless a newer one
// saved here is not yet on disk.
func (s *Store) LoadLogged(id string, at LogPos) (*Record, error) {
	if err := checkID(id); err != nil {
		return nil, err
	}
	if b := s.unsaved(id); b != nil {
		if rec := decodeRecord(b, id); rec != nil {
			return rec, nil
		}
	}
	if strings.ContainsAny(at.Log, `/\`) || !strings.HasSuffix(at.Log, logExt) || at.Offset < 0 || at.Size <= 0 || at.Size > maxLogSize {
		return nil, errorf(CodeRun, "run %s: %q is not a place in the run logs", id, at.Log)
	}
	root, done, err := s.root(false)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := checkLogFolder(root, s.Dir); err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: %v", id, err), Err: err}
	}
	f, err := root.Open(path.Join(LogFolder, at.Log))
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: %v", id, err), Err: err}
	}
	defer f.Close()
	b := make([]byte, at.Size)
	if _, err := f.ReadAt(b, at.Offset); err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: %v", id, err), Err: err}
	}
	rec := decodeRecord(b, id)
	if rec == nil {
		return nil, errorf(CodeRun, "run %s: no record of it at %d in %s", id, at.Offset, at.Log)
	}
	return rec, nil
}
