package pkgmgr

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"

	"halolang.dev/halo/internal/safefile"
	"halolang.dev/halo/pkgmgr/statedir"
)

// File and folder names inside a project.
const (
	LockFile = "halo.lock"
	StateDir = statedir.Name
	ToolsDir = "tools" // under StateDir: one folder per installed package
	// ProjectTrustFile is where older versions kept trust, under StateDir. A repository can
	// commit it, so it is ignored (with a warning): trust lives in the user's TrustFile.
	ProjectTrustFile = "trust.json"
	Installed        = "package.halotool" // in each package's folder: the verified package itself
)

// A Lock is halo.lock: every installed package, pinned.
type Lock struct {
	Tools map[string]*LockEntry `json:"tools"`
	// MCP pins MCP servers' tool definitions (see pins.go).
	MCP MCPPins `json:"mcp,omitempty"`
}

// A LockEntry pins one package.
type LockEntry struct {
	Version string `json:"version"`
	// Source says where the package came from: "registry:<registry>#name@version", a path
	// (relative to the project when inside it) or an https URL.
	Source      string      `json:"source"`
	SHA256      string      `json:"sha256"`
	Providers   []string    `json:"providers"`
	Permissions Permissions `json:"permissions"`
	// Signature is the package's signature and its publisher, when it is signed; halo
	// install verifies it again with the key the user trusts for that publisher.
	Signature *Signature `json:"signature,omitempty"`
}

// MaxLockBytes is the largest halo.lock halo reads: a repository's may be anything (a named
// pipe, which is refused too, is read without waiting).
const MaxLockBytes = 16 << 20

// ReadLock reads dir/halo.lock; a missing file is an empty lock.
func ReadLock(dir string) (*Lock, error) {
	b, err := safefile.Read(filepath.Join(dir, LockFile), MaxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Tools: map[string]*LockEntry{}}, nil
	}
	if errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge) {
		return nil, &Error{Code: CodeIntegrity, Message: "halo.lock: " + err.Error(), Err: err}
	}
	if err != nil {
		return nil, err
	}
	return ParseLock(b)
}

// ParseLock parses halo.lock's contents.
func ParseLock(b []byte) (*Lock, error) {
	var l Lock
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, &Error{Code: CodeIntegrity, Message: "halo.lock is not valid JSON", Err: err}
	}
	if l.Tools == nil {
		l.Tools = map[string]*LockEntry{}
	}
	for name, e := range l.Tools {
		if e == nil || !reName().MatchString(name) || e.SHA256 == "" || e.Source == "" {
			return nil, errorf(CodeIntegrity, "halo.lock: entry %q is incomplete", name)
		}
	}
	return &l, nil
}

// Marshal encodes the lock as stored: indented, names sorted, a final newline.
func (l *Lock) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Names returns the locked package names, sorted.
func (l *Lock) Names() []string { return sortedKeys(l.Tools) }

// ProviderNames lists every provider in the lock, for `halo validate`, which only needs the
// names: provider name → package name.
func (l *Lock) ProviderNames() map[string]string {
	out := map[string]string{}
	for name, e := range l.Tools {
		for _, p := range e.Providers {
			out[p] = name
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
