// Package workspace owns the built-in Workspace provider: reading, writing, editing, listing,
// searching and deleting files under one root folder, and never outside it. It is a plugin:
// the halo binary serves it out of process (`halo __plugin workspace`), and it depends on the
// SDK alone.
//
// Confinement is layered. Every path is checked here (no NUL, not absolute, no `..` that
// leaves the root) and then opened through an os.Root, which refuses symbolic links that
// point out of the root, even ones created after the check. On Linux the host also starts
// the plugin under Landlock, so a bug in this package still cannot reach outside the root.
package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// Limits bound what one call may read, write or return, so a model cannot fill its own
// context (or the host's memory) with one request.
type Limits struct {
	// MaxRead is the most bytes read returns from one file; longer files are cut with a note.
	MaxRead int64
	// MaxWrite is the largest content write and edit accept.
	MaxWrite int64
	// MaxEntries is the most entries list returns.
	MaxEntries int
	// MaxMatches is the most lines search returns.
	MaxMatches int
	// MaxSearchFile is the largest file search looks into; larger files are skipped.
	MaxSearchFile int64
}

// DefaultLimits are the limits of a Workspace declared without options.
var DefaultLimits = Limits{
	MaxRead:       1 << 20,
	MaxWrite:      10 << 20,
	MaxEntries:    1000,
	MaxMatches:    200,
	MaxSearchFile: 4 << 20,
}

// A Failure is a problem the model should read and act on (a missing file, an ambiguous
// edit, a path outside the root). The provider returns it as a domain failure, a result the
// model reads, rather than as an error that stops the run.
type Failure struct {
	Message string
}

func (f *Failure) Error() string { return f.Message }

func failf(format string, args ...any) error {
	return &Failure{Message: fmt.Sprintf(format, args...)}
}

// A Workspace is one opened root folder. It is safe for concurrent use.
type Workspace struct {
	root   *os.Root
	dir    string
	write  bool
	limits Limits
}

// Open opens dir as a workspace root. With write false, every method that changes a file
// fails.
func Open(dir string, write bool, limits Limits) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("workspace root is empty")
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace root: %w", err)
	}
	return &Workspace{root: r, dir: dir, write: write, limits: limits}, nil
}

// Close releases the root.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir is the root folder as given to Open.
func (w *Workspace) Dir() string { return w.dir }

// Writable reports whether the writing methods are enabled.
func (w *Workspace) Writable() bool { return w.write }

// clean checks a path a model gave and returns it in the form os.Root takes. The checks
// here give clear messages; os.Root is what actually guarantees confinement.
func clean(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", failf("path %q contains a NUL byte", p)
	}
	if p == "" {
		return ".", nil
	}
	if path.IsAbs(p) || strings.HasPrefix(p, `\`) {
		return "", failf("path %q is absolute; give a path relative to the workspace root", p)
	}
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", failf("path %q leaves the workspace root; give a path inside it", p)
	}
	return c, nil
}

// explain turns an os.Root error into a failure the model can act on.
func explain(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failf("no such file or folder: %s; call list to see what exists", p)
	case errors.Is(err, fs.ErrPermission):
		return failf("permission denied: %s", p)
	case strings.Contains(err.Error(), "escapes"):
		return failf("path %s leads outside the workspace root (through a symbolic link); it cannot be used", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return failf("%s: %v", p, pe.Err)
	}
	return failf("%s: %v", p, err)
}

func (w *Workspace) needWrite(method string) error {
	if !w.write {
		return failf("%s is not allowed: this workspace is read-only (declared with write: false)", method)
	}
	return nil
}

// ReadResult is what read returns.
type ReadResult struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	// Lines counts the lines of Content.
	Lines int `json:"lines"`
	// Size is the file's size in bytes.
	Size int64 `json:"size"`
	// Truncated is set when the file was larger than the read limit; Note says how to go on.
	Truncated bool   `json:"truncated,omitempty"`
	Note      string `json:"note,omitempty"`
}

// Read returns a text file's content. From offset (a byte offset, 0 for the start) it
// reads at most the read limit.
func (w *Workspace) Read(p string, offset int64) (ReadResult, error) {
	c, err := clean(p)
	if err != nil {
		return ReadResult{}, err
	}
	f, err := w.root.Open(c)
	if err != nil {
		return ReadResult{}, explain(p, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ReadResult{}, explain(p, err)
	}
	if st.IsDir() {
		return ReadResult{}, failf("%s is a folder; call list to see its entries", p)
	}
	if offset < 0 || (offset > 0 && offset >= st.Size()) {
		return ReadResult{}, failf("offset %d is outside %s (%d bytes)", offset, p, st.Size())
	}
	if offset > 0 {
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return ReadResult{}, explain(p, err)
		}
	}
	buf, err := io.ReadAll(io.LimitReader(f, w.limits.MaxRead+1))
	if err != nil {
		return ReadResult{}, explain(p, err)
	}
	res := ReadResult{Path: p, Size: st.Size()}
	if int64(len(buf)) > w.limits.MaxRead {
		// Cut on a rune boundary so the content stays valid text.
		buf = trimPartialRune(buf[:w.limits.MaxRead])
		res.Truncated = true
		res.Note = fmt.Sprintf("file cut at %d of %d bytes; read again with offset %d for the rest", offset+int64(len(buf)), st.Size(), offset+int64(len(buf)))
	}
	if isBinary(buf) {
		return ReadResult{}, failf("%s looks like a binary file (%d bytes); only text files can be read", p, st.Size())
	}
	res.Content = string(buf)
	res.Lines = countLines(buf)
	return res, nil
}

func isBinary(b []byte) bool {
	head := b[:min(len(b), 8000)]
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head))
}

// trimPartialRune drops an incomplete rune at the end of b (a cut in the middle of one).
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

func countLines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// WriteResult is what write returns.
type WriteResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Created bool   `json:"created"`
}

// Write creates or replaces a file with content, creating its parent folders.
func (w *Workspace) Write(p, content string) (WriteResult, error) {
	if err := w.needWrite("write"); err != nil {
		return WriteResult{}, err
	}
	c, err := clean(p)
	if err != nil {
		return WriteResult{}, err
	}
	if c == "." {
		return WriteResult{}, failf("write needs a file path, not the workspace root")
	}
	if int64(len(content)) > w.limits.MaxWrite {
		return WriteResult{}, failf("content is %d bytes; the limit is %d", len(content), w.limits.MaxWrite)
	}
	created := false
	if _, err := w.root.Stat(c); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	if dir := path.Dir(c); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return WriteResult{}, explain(p, err)
		}
	}
	if err := w.writeFile(c, []byte(content)); err != nil {
		return WriteResult{}, explain(p, err)
	}
	return WriteResult{Path: p, Bytes: len(content), Created: created}, nil
}

func (w *Workspace) writeFile(c string, b []byte) error {
	f, err := w.root.OpenFile(c, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// EditResult is what edit returns.
type EditResult struct {
	Path     string `json:"path"`
	Replaced int    `json:"replaced"`
	Bytes    int    `json:"bytes"`
}

// Edit replaces old with new in a file. old must occur exactly once, so an edit never lands
// somewhere the model did not mean.
func (w *Workspace) Edit(p, old, new string) (EditResult, error) {
	if err := w.needWrite("edit"); err != nil {
		return EditResult{}, err
	}
	c, err := clean(p)
	if err != nil {
		return EditResult{}, err
	}
	if old == "" {
		return EditResult{}, failf("old is empty; give the exact text to replace (use write to create a file)")
	}
	st, err := w.root.Stat(c)
	if err != nil {
		return EditResult{}, explain(p, err)
	}
	if st.IsDir() {
		return EditResult{}, failf("%s is a folder", p)
	}
	if st.Size() > w.limits.MaxWrite {
		return EditResult{}, failf("%s is %d bytes; files above %d bytes cannot be edited", p, st.Size(), w.limits.MaxWrite)
	}
	b, err := w.root.ReadFile(c)
	if err != nil {
		return EditResult{}, explain(p, err)
	}
	switch n := strings.Count(string(b), old); n {
	case 0:
		return EditResult{}, failf("old text not found in %s; read the file and copy the text exactly", p)
	case 1:
	default:
		return EditResult{}, failf("old text occurs %d times in %s; include more surrounding lines so it occurs once", n, p)
	}
	out := strings.Replace(string(b), old, new, 1)
	if int64(len(out)) > w.limits.MaxWrite {
		return EditResult{}, failf("the edited file would be %d bytes; the limit is %d", len(out), w.limits.MaxWrite)
	}
	if err := w.writeFile(c, []byte(out)); err != nil {
		return EditResult{}, explain(p, err)
	}
	return EditResult{Path: p, Replaced: 1, Bytes: len(out)}, nil
}

// An Entry is one item of a listing.
type Entry struct {
	Path string `json:"path"`
	// Type is "file", "dir" or "symlink".
	Type string `json:"type"`
	Size int64  `json:"size,omitempty"`
}

// ListResult is what list returns.
type ListResult struct {
	Path      string  `json:"path"`
	Entries   []Entry `json:"entries"`
	Truncated bool    `json:"truncated,omitempty"`
}

// List returns the entries of a folder, sorted by path; recursive lists the whole tree
// (skipping .git). Entry paths are relative to the workspace root.
func (w *Workspace) List(p string, recursive bool) (ListResult, error) {
	c, err := clean(p)
	if err != nil {
		return ListResult{}, err
	}
	st, err := w.root.Stat(c)
	if err != nil {
		return ListResult{}, explain(p, err)
	}
	if !st.IsDir() {
		return ListResult{}, failf("%s is a file; call read to see its content", p)
	}
	res := ListResult{Path: p, Entries: []Entry{}}
	fsys := w.root.FS()
	walkErr := fs.WalkDir(fsys, c, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == c {
				return err
			}
			return nil // an unreadable sub-folder is left out, not fatal
		}
		if name == c {
			return nil
		}
		if len(res.Entries) >= w.limits.MaxEntries {
			res.Truncated = true
			return fs.SkipAll
		}
		e := Entry{Path: name, Type: entryType(d)}
		if e.Type == "file" {
			if info, err := d.Info(); err == nil {
				e.Size = info.Size()
			}
		}
		res.Entries = append(res.Entries, e)
		if d.IsDir() && (!recursive || d.Name() == ".git") {
			return fs.SkipDir
		}
		return nil
	})
	if walkErr != nil {
		return ListResult{}, explain(p, walkErr)
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Path < res.Entries[j].Path })
	return res, nil
}

func entryType(d fs.DirEntry) string {
	switch {
	case d.Type()&fs.ModeSymlink != 0:
		return "symlink"
	case d.IsDir():
		return "dir"
	}
	return "file"
}

// A Match is one line that matched a search.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// SearchResult is what search returns.
type SearchResult struct {
	Pattern   string  `json:"pattern"`
	Matches   []Match `json:"matches"`
	Files     int     `json:"filesSearched"`
	Truncated bool    `json:"truncated,omitempty"`
}

// maxMatchText bounds one returned line, so a minified file does not flood the result.
const maxMatchText = 500

// Search finds the lines matching a regular expression (Go syntax) in the text files under
// a folder, skipping .git, binary files and files over the search size limit.
func (w *Workspace) Search(pattern, p string) (SearchResult, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return SearchResult{}, failf("pattern %q is not a valid regular expression: %v", pattern, err)
	}
	c, err := clean(p)
	if err != nil {
		return SearchResult{}, err
	}
	if _, err := w.root.Stat(c); err != nil {
		return SearchResult{}, explain(p, err)
	}
	res := SearchResult{Pattern: pattern, Matches: []Match{}}
	fsys := w.root.FS()
	walkErr := fs.WalkDir(fsys, c, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if name == c {
				return err
			}
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" && name != c {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > w.limits.MaxSearchFile {
			return nil
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil || isBinary(b) {
			return nil
		}
		res.Files++
		for i, line := range strings.Split(string(b), "\n") {
			if !re.MatchString(line) {
				continue
			}
			if len(res.Matches) >= w.limits.MaxMatches {
				res.Truncated = true
				return fs.SkipAll
			}
			if len(line) > maxMatchText {
				line = string(trimPartialRune([]byte(line[:maxMatchText]))) + "…"
			}
			res.Matches = append(res.Matches, Match{Path: name, Line: i + 1, Text: line})
		}
		return nil
	})
	if walkErr != nil {
		return SearchResult{}, explain(p, walkErr)
	}
	return res, nil
}

// DeleteResult is what delete returns.
type DeleteResult struct {
	Path    string `json:"path"`
	Deleted bool   `json:"deleted"`
}

// Delete removes a file or an empty folder; recursive removes a folder and everything in
// it. The root itself is never deleted.
func (w *Workspace) Delete(p string, recursive bool) (DeleteResult, error) {
	if err := w.needWrite("delete"); err != nil {
		return DeleteResult{}, err
	}
	c, err := clean(p)
	if err != nil {
		return DeleteResult{}, err
	}
	if c == "." {
		return DeleteResult{}, failf("the workspace root itself cannot be deleted")
	}
	st, err := w.root.Lstat(c)
	if err != nil {
		return DeleteResult{}, explain(p, err)
	}
	if st.IsDir() && recursive {
		err = w.root.RemoveAll(c)
	} else {
		err = w.root.Remove(c)
	}
	if err != nil {
		if st.IsDir() && !recursive {
			return DeleteResult{}, failf("%s is a folder that is not empty; pass recursive: true to delete it and its contents", p)
		}
		return DeleteResult{}, explain(p, err)
	}
	return DeleteResult{Path: p, Deleted: true}, nil
}
