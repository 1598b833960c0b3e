package pkgmgr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TrustFormat is the format tag of the user's trust store.
const TrustFormat = "halo-trust/1"

// A Trust is one project's trust decisions: the exact sha256 its user trusts for each package
// that runs code.
type Trust struct {
	Trusted map[string]string
}

// Trusts reports whether the package called name is trusted at exactly sha256.
func (t *Trust) Trusts(name, sha256 string) bool {
	return sha256 != "" && t.Trusted[name] == sha256
}

// A trustStore is the user's trust file, kept in the user's config folder and never in a
// project: a repository ships every file of the project, so trust read from it would be the
// repository's decision, not the user's. It is keyed by project folder (absolute, symbolic
// links resolved), then by package name.
type trustStore struct {
	Format   string                       `json:"format"`
	Projects map[string]map[string]string `json:"projects"`
	// Publishers are the publisher keys this user trusts, by publisher (see keys.go).
	Publishers map[string][]PublisherKey `json:"publishers,omitempty"`
	// Signed names the packages this user installed signed, with the publisher that signed
	// them: an unsigned or renamed copy is refused from then on (downgrade.go).
	Signed map[string]string `json:"signed,omitempty"`
}

// projectKey is the project folder as the trust store names it.
func (p *Project) projectKey() (string, error) {
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// readTrustStore reads the user's trust file; a missing file (or none configured) trusts
// nothing.
func (p *Project) readTrustStore() (*trustStore, error) {
	ts := &trustStore{Format: TrustFormat, Projects: map[string]map[string]string{}}
	if p.TrustFile == "" {
		return ts, nil
	}
	b, err := os.ReadFile(p.TrustFile)
	if errors.Is(err, fs.ErrNotExist) {
		return ts, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read this user's trust file: %w", err)
	}
	if err := json.Unmarshal(b, ts); err != nil {
		return nil, fmt.Errorf("%s: %w", p.TrustFile, err)
	}
	if ts.Format != TrustFormat {
		return nil, fmt.Errorf("%s: format %q: want %q", p.TrustFile, ts.Format, TrustFormat)
	}
	if ts.Projects == nil {
		ts.Projects = map[string]map[string]string{}
	}
	return ts, nil
}

// Trust returns what this project's user trusts here. A .halo/trust.json in the project (where
// older versions kept trust, and where a repository can commit one) is ignored, with a
// warning.
func (p *Project) Trust() (*Trust, error) {
	p.warnProjectTrust()
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	key, err := p.projectKey()
	if err != nil {
		return nil, err
	}
	t := &Trust{Trusted: map[string]string{}}
	for n, sum := range ts.Projects[key] {
		t.Trusted[n] = sum
	}
	return t, nil
}

func (p *Project) warnProjectTrust() {
	if p.Warn == nil || p.warnedTrust {
		return
	}
	if _, err := os.Lstat(filepath.Join(p.Dir, StateDir, ProjectTrustFile)); err != nil {
		return
	}
	p.warnedTrust = true
	where := "this user's trust file"
	if p.TrustFile != "" {
		where = p.TrustFile
	}
	p.Warn(fmt.Sprintf("%s/%s is ignored: a repository cannot grant trust; trust is kept per user, in %s (run halo install --trust after reading halo.lock)", StateDir, ProjectTrustFile, where))
}

// trustChange returns the user's trust file with this project's entry replaced by t (when
// not nil) and the publisher keys added.
func (p *Project) trustChange(t *Trust, keys []PublisherKey) ([]byte, error) {
	if p.TrustFile == "" {
		return nil, errorf(CodeUntrusted, "--trust needs a place for this user's trust decisions: set HOME (or XDG_CONFIG_HOME)")
	}
	ts, err := p.readTrustStore()
	if err != nil {
		return nil, err
	}
	key, err := p.projectKey()
	if err != nil {
		return nil, err
	}
	switch {
	case t == nil:
	case len(t.Trusted) == 0:
		delete(ts.Projects, key)
	default:
		ts.Projects[key] = t.Trusted
	}
	if len(keys) > 0 {
		withKeys(ts, keys, nil, p.now().UTC().Format(time.RFC3339))
	}
	b, err := json.MarshalIndent(ts, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
