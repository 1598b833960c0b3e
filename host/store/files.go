package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
	"unicode/utf8"
)

// A fileState is what says whether a file changed since it was indexed.
type fileState struct {
	Size    int64
	ModTime int64 // nanoseconds since 1970
	Hash    []byte
}

// A found file is one file a store's patterns match.
type found struct {
	Path string
	fileState
	// Linked says the file may change where no watch on its folder sees it: it is a link,
	// or has more than one name.
	Linked bool
}

// A Skipped file matched a pattern and is not in the index, with why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// The reasons a file is skipped.
const (
	SkipBinary   = "binary"
	SkipTooLarge = "too large"
	SkipNotFile  = "not a regular file"
	SkipOutside  = "a link out of the project"
	SkipVanished = "vanished while indexing"
	SkipUnread   = "unreadable"
)

// folders a store never reads: Halo's own state and git's.
var neverRead = map[string]bool{".halo": true, ".git": true}

// scan lists the files the globs match under root, sorted by path, with their size and time
// (no hash: reading is left for the files that changed). Files that are links out of the
// project, or not regular files, are skipped and named. A pattern whose folder does not exist
// matches nothing.
func scan(root *os.Root, globs []glob) ([]found, []Skipped, error) {
	return scanWatched(root, globs, nil)
}

// scanWatched is scan that has w watch every folder it reads, before it reads it, and the
// folders above each pattern's base.
func scanWatched(root *os.Root, globs []glob, w *watcher) ([]found, []Skipped, error) {
	seen := map[string]bool{}
	var out []found
	var skipped []Skipped
	fsys := root.FS()
	for _, g := range globs {
		base := g.base
		if base == "" {
			base = "."
		}
		if w != nil && base != "." {
			// The folders above the base: the base's making or removal is an event in one.
			w.add(root, ".")
			for i := range len(base) {
				if base[i] == '/' {
					w.add(root, base[:i])
				}
			}
		}
		err := fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == base && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipAll
				}
				if d != nil && d.IsDir() || p == base {
					// A folder that cannot be read (or a base that is a link out): its files
					// are not there to index.
					skipped = append(skipped, Skipped{Path: p, Reason: SkipUnread})
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if p != "." && (neverRead[d.Name()] || !g.mayHold(p)) {
					return fs.SkipDir
				}
				w.add(root, p)
				return nil
			}
			if !g.match(p) || seen[p] {
				return nil
			}
			seen[p] = true
			if inNeverRead(p) {
				return nil
			}
			// An entry of a folder read through the root was stat'ed (lstatat) as it was
			// read; only a link needs a stat of its own, through the root, which follows it
			// only as far as the project goes.
			var fi fs.FileInfo
			if d.Type()&fs.ModeSymlink != 0 {
				fi, err = root.Stat(p)
			} else {
				fi, err = d.Info()
			}
			switch {
			case err != nil && d.Type()&fs.ModeSymlink != 0:
				skipped = append(skipped, Skipped{Path: p, Reason: SkipOutside})
				return nil
			case errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				skipped = append(skipped, Skipped{Path: p, Reason: SkipUnread})
				return nil
			case !fi.Mode().IsRegular():
				skipped = append(skipped, Skipped{Path: p, Reason: SkipNotFile})
				return nil
			}
			linked := d.Type()&fs.ModeSymlink != 0 || aliased(fi)
			out = append(out, found{Path: p, fileState: fileState{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}, Linked: linked})
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	sort.Slice(skipped, func(i, j int) bool { return skipped[i].Path < skipped[j].Path })
	return out, skipped, nil
}

func inNeverRead(p string) bool {
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if neverRead[path.Base(dir)] {
			return true
		}
	}
	return neverRead[path.Base(p)]
}

// readText reads a file the store indexes, through root (so no link leads out of the
// project): a regular file of at most max bytes (opened without waiting, so a planted named
// pipe is refused), valid UTF-8 with no NUL byte. reason says why it is skipped otherwise
// ("" when it is read).
func readText(root *os.Root, p string, max int64) (text []byte, st fileState, reason string) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, st, SkipVanished
	case errors.Is(err, fs.ErrPermission):
		return nil, st, SkipUnread
	case err != nil:
		return nil, st, SkipOutside // the root refuses a link that leads out of it
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, st, SkipUnread
	case !fi.Mode().IsRegular():
		return nil, st, SkipNotFile
	case fi.Size() > max:
		return nil, st, SkipTooLarge
	}
	// The file may grow while it is read: one byte past the limit says so.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	switch {
	case err != nil:
		return nil, st, SkipUnread
	case int64(len(b)) > max:
		return nil, st, SkipTooLarge
	case isBinary(b):
		return nil, st, SkipBinary
	}
	sum := sha256.Sum256(b)
	return b, fileState{Size: int64(len(b)), ModTime: fi.ModTime().UnixNano(), Hash: sum[:]}, ""
}

// isBinary reports whether b is not text: a NUL byte in its first 8 KiB, or not UTF-8.
func isBinary(b []byte) bool {
	head := b
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(b)
}
