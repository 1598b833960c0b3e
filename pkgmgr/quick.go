package pkgmgr

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
)

// readListing reads a package file's manifest and file list without decoding the files:
// each file comes back with its path, executable bit and listed sha256, and no Data. It is
// used only on a package.halotool whose own sha256 equals the one halo.lock pins, i.e. the
// very bytes ReadPackage checked in full (listed checksums included) when it was installed.
// It reports false for anything it cannot use (an older package without per-file checksums),
// and the caller falls back to ReadPackage.
func readListing(data []byte) (*Package, bool) {
	var w struct {
		Format   string          `json:"format"`
		Manifest json.RawMessage `json:"manifest"`
		Files    []struct {
			Path       string `json:"path"`
			SHA256     string `json:"sha256"`
			Executable bool   `json:"executable"`
		} `json:"files"`
	}
	if json.Unmarshal(data, &w) != nil || w.Format != Format {
		return nil, false
	}
	m, err := ParseManifest(w.Manifest)
	if err != nil {
		return nil, false
	}
	p := &Package{Manifest: m, ManifestJSON: w.Manifest, Bytes: data, SHA256: Sum(data)}
	for _, f := range w.Files {
		if len(f.SHA256) != 64 || checkFilePath(f.Path) != nil {
			return nil, false
		}
		p.Files = append(p.Files, File{Path: f.Path, Executable: f.Executable, SHA256: f.SHA256})
	}
	return p, true
}

// quickMatches reports whether the folder dir of fsys holds exactly what unpacking p writes,
// plus the package file, by hashing each file on disk and comparing it with the checksum the
// package lists: same names, contents and executable bits, nothing else. A nil fsys holds
// nothing.
func quickMatches(fsys fs.FS, dir string, p *Package) bool {
	if fsys == nil {
		return false
	}
	var manifest bytes.Buffer
	if json.Indent(&manifest, p.ManifestJSON, "", "  ") != nil {
		return false
	}
	manifest.WriteByte('\n')
	type want struct {
		sum  string
		exec bool
	}
	expected := map[string]want{
		ManifestFile: {Sum(manifest.Bytes()), false},
		Installed:    {p.SHA256, false},
	}
	for _, f := range p.Files {
		expected[f.Path] = want{f.SHA256, f.Executable}
	}
	found := 0
	ok := true
	err := fs.WalkDir(fsys, dir, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := relSlash(dir, fp)
		if rel == Described {
			return nil // the description halo add wrote beside the package; not package content
		}
		w, isExpected := expected[rel]
		if !isExpected || !d.Type().IsRegular() {
			ok = false
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if (info.Mode().Perm()&0o100 != 0) != w.exec {
			ok = false
			return fs.SkipAll
		}
		if sum, err := hashFile(fsys, fp); err != nil || sum != w.sum {
			ok = false
			return fs.SkipAll
		}
		found++
		return nil
	})
	return err == nil && ok && found == len(expected)
}

func hashFile(fsys fs.FS, p string) (string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
