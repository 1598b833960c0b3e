package runstore

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"halolang.dev/halo/host/runtime"
	"halolang.dev/halo/internal/safefile"
)

// Halo before the embedded database kept runs as files in .halo/runs: <runId>.json, one
// record a file, and (halo mcp, halo serve) run logs, log/<time>-<random>.jsonl, a record
// a line, the last line of a run its newest record and a file winning over the logs. The
// first open of the store there imports them.

// legacyLogs is the old run logs' folder; maxLegacyRecord the largest record imported.
const (
	legacyLogs      = "log"
	maxLegacyRecord = 64 << 20
)

// An Import is what opening the store found of the files of an older halo.
type Import struct {
	// Imported counts the runs imported; Aside is the folder (in .halo/runs) their files
	// were moved to.
	Imported int
	Aside    string
	// Skipped are files that are not records (not JSON, another run's record), left where
	// they were.
	Skipped []string
	// Err says why nothing was imported (a file that cannot be read): the folder is left as
	// it was, and the next open tries again.
	Err error
}

// Imported returns what opening the store found of an older halo's files (nil: none).
func (s *SQLite) Imported() *Import { return s.imp }

// importFolder imports the record files of root into the database, in one transaction, and
// only once it is committed moves them aside, to imported-<UTC time>/ in the folder (nothing
// is ever removed). A file or log that cannot be read stops the import before anything is
// written or moved: the folder stays as it was, the store opens all the same, and the
// problem is logged. A paused record is sealed as it is imported only when its file is as
// halo wrote it (the user's, mode 0600): a record a repository shipped (mode 0644 from git)
// is imported unsealed, and halo resume refuses it (RUN_TAMPERED).
func (s *SQLite) importFolder(root *os.Root) error {
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		s.reportImport(&Import{Err: err})
		return nil
	}
	var files, leftovers []string
	hasLogs := false
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == legacyLogs:
			hasLogs = true
		case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp"):
			leftovers = append(leftovers, name)
		case strings.HasSuffix(name, ".json"):
			files = append(files, name)
		}
	}
	if len(files) == 0 && !hasLogs {
		return nil
	}
	ctx := context.Background()
	// The write lock first: a second process opening now waits, then finds the files gone.
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return s.dbErr("import old records", err)
	}
	defer tx.Rollback()
	imp := &Import{}
	recs := map[string]*runtime.Record{}
	trusted := map[string]bool{}
	var moved []string
	if hasLogs {
		fi, err := root.Lstat(legacyLogs)
		switch {
		case err != nil:
			imp.Err = err
		case !fi.IsDir():
			imp.Skipped = append(imp.Skipped, legacyLogs+" (a symbolic link or not a folder)")
			hasLogs = false
		default:
			if err := s.readLogs(root, recs, imp); err != nil {
				imp.Err = err
			}
		}
	}
	sort.Strings(files)
	for _, name := range files {
		if imp.Err != nil {
			break
		}
		id := strings.TrimSuffix(name, ".json")
		fi, err := root.Lstat(name)
		if err != nil {
			imp.Err = err
			break
		}
		if !ValidID(id) || !fi.Mode().IsRegular() {
			imp.Skipped = append(imp.Skipped, name)
			continue
		}
		b, err := safefile.ReadIn(root, name, maxLegacyRecord)
		if err != nil {
			imp.Err = fmt.Errorf("%s: %w", name, err)
			break
		}
		var rec runtime.Record
		if json.Unmarshal(b, &rec) != nil || rec.RunID != id {
			imp.Skipped = append(imp.Skipped, name)
			continue
		}
		recs[id] = &rec
		trusted[id] = ownFile(fi)
		moved = append(moved, name)
	}
	if imp.Err != nil {
		s.reportImport(imp)
		return nil
	}
	var key []byte
	for id, rec := range recs {
		if rec.Status != runtime.Paused || !trusted[id] {
			continue
		}
		if key == nil {
			if key, err = s.SealKey(); err != nil {
				return err
			}
		}
		runtime.SealRecord(rec, key)
	}
	startSQL := rowsSQL(putStart, 1)
	for _, rec := range recs {
		data, err := appendRecord(nil, rec)
		if err != nil {
			imp.Skipped = append(imp.Skipped, rec.RunID)
			continue
		}
		p := &pending{id: rec.RunID, key: s.keys.of(rec.RunID), data: packRecord(data), cols: ColumnsOf(rec)}
		if _, err := tx.ExecContext(ctx, startSQL, rowArgs(nil, p)...); err != nil {
			return s.dbErr("import old records", err)
		}
		imp.Imported++
	}
	if err := tx.Commit(); err != nil {
		return s.dbErr("import old records", err)
	}
	// Committed: the files go aside.
	imp.Aside = "imported-" + s.opts.Now().UTC().Format("20060102T150405Z")
	if err := root.Mkdir(imp.Aside, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		imp.Err = fmt.Errorf("the records were imported, but their files could not be moved aside: %w", err)
		s.reportImport(imp)
		return nil
	}
	if hasLogs {
		moved = append(moved, legacyLogs)
	}
	for _, name := range append(moved, leftovers...) {
		if err := root.Rename(name, path.Join(imp.Aside, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			imp.Err = fmt.Errorf("the records were imported, but %s could not be moved aside: %w", name, err)
			break
		}
	}
	if d, err := root.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
	s.reportImport(imp)
	return nil
}

// readLogs reads every run log into recs (a run's last line wins), passing over lines that
// are not a record (the end of a log a crash cut short).
func (s *SQLite) readLogs(root *os.Root, recs map[string]*runtime.Record, imp *Import) error {
	entries, err := fs.ReadDir(root.FS(), legacyLogs)
	if err != nil {
		return err
	}
	for _, e := range entries { // names begin with the time the log was started: oldest first
		name := path.Join(legacyLogs, e.Name())
		if !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
			imp.Skipped = append(imp.Skipped, name)
			continue
		}
		if err := readLog(root, name, recs); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func readLog(root *os.Root, name string, recs map[string]*runtime.Record) error {
	f, err := root.OpenFile(name, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLegacyRecord)
	for sc.Scan() {
		var rec runtime.Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil && ValidID(rec.RunID) {
			recs[rec.RunID] = &rec
		}
	}
	return sc.Err()
}

// reportImport keeps and logs what the import did.
func (s *SQLite) reportImport(imp *Import) {
	s.imp = imp
	switch {
	case imp.Err != nil && imp.Imported == 0:
		s.log.Warn("the run records an older halo left in this folder could not be imported; the folder was left as it was", "folder", s.dir, "error", imp.Err)
	case imp.Err != nil:
		s.log.Warn("run records imported, but not all their files were moved aside", "folder", s.dir, "runs", imp.Imported, "error", imp.Err)
	case imp.Imported > 0:
		s.log.Info("run records of an older halo imported into the store; their files were moved aside", "runs", imp.Imported, "aside", path.Join(s.dir, imp.Aside))
	}
	if len(imp.Skipped) > 0 {
		s.log.Warn("files in the run folder that are not run records were left where they are", "folder", s.dir, "files", strings.Join(imp.Skipped, ", "))
	}
}
