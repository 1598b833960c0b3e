package pkgmgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/halo-lang/halo/pkgmgr/statedir"
)

// File and folder names inside a project.
const (
	LockFile  = "halo.lock"
	StateDir  = statedir.Name
	ToolsDir  = "tools"            // under StateDir: one folder per installed package
	TrustFile = "trust.json"       // under StateDir
	Installed = "package.halotool" // in each package's folder: the verified package itself
)

// A Lock is halo.lock: every installed package, pinned.
type Lock struct {
	Tools map[string]*LockEntry `json:"tools"`
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
}

// ReadLock reads dir/halo.lock; a missing file is an empty lock.
func ReadLock(dir string) (*Lock, error) {
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Tools: map[string]*LockEntry{}}, nil
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

// A Trust is .halo/trust.json: the exact sha256 this machine trusts for each package that
// runs code. It is never committed.
type Trust struct {
	Trusted map[string]string `json:"trusted"`
}

// ReadTrust reads dir/.halo/trust.json; a missing file trusts nothing.
func ReadTrust(dir string) (*Trust, error) {
	b, err := os.ReadFile(filepath.Join(dir, StateDir, TrustFile))
	if errors.Is(err, fs.ErrNotExist) {
		return &Trust{Trusted: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var t Trust
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf(".halo/trust.json: %w", err)
	}
	if t.Trusted == nil {
		t.Trusted = map[string]string{}
	}
	return &t, nil
}

// Trusts reports whether the package called name is trusted at exactly sha256.
func (t *Trust) Trusts(name, sha256 string) bool { return t.Trusted[name] == sha256 }

// Marshal encodes the trust file.
func (t *Trust) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
