package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Protect returns p with the paths in hidden granted to nothing and the paths in readOnly
// granted read-only, however wide p's grants are: the host keeps a project's .halo (its
// installed packages and run records) and halo.lock from the plugins it starts there.
//
// Landlock grants a folder with everything below it and cannot take a part back, so a grant
// that holds a protected path is replaced by grants of its entries, one by one, down to the
// protected path: every entry beside it is granted as before, and each folder on the way
// becomes ListOnly (its entries can be listed, and none created, removed or renamed there:
// a right to create or rename in the folder that holds halo.lock would let a plugin rename a
// file it wrote onto it). Symbolic links, and entries that are neither files nor folders, are
// not granted on the way (a link is still followed to where it leads, when that is granted).
// Entries created in those folders later are not granted. A grant inside a hidden path is an
// error. All paths must be absolute, clean and have their symbolic links resolved.
func (p Policy) Protect(hidden, readOnly []string) (Policy, error) {
	out := Policy{Network: p.Network, ListOnly: slices.Clone(p.ListOnly)}
	for _, g := range p.ReadOnly {
		if err := out.grant(g, false, hidden, nil); err != nil {
			return Policy{}, err
		}
	}
	for _, g := range p.ReadWrite {
		if err := out.grant(g, true, hidden, readOnly); err != nil {
			return Policy{}, err
		}
	}
	return out, nil
}

// grant adds g to out, read-write when write is set, leaving out what hidden and readOnly
// protect.
func (out *Policy) grant(g string, write bool, hidden, readOnly []string) error {
	for _, h := range hidden {
		if within(g, h) {
			return fmt.Errorf("%s is inside %s, which no plugin is granted", g, h)
		}
	}
	if write {
		for _, r := range readOnly {
			if within(g, r) {
				out.ReadOnly = append(out.ReadOnly, g)
				return nil
			}
		}
	}
	below := false
	for _, x := range slices.Concat(hidden, readOnly) {
		below = below || (x != g && within(x, g) && (write || slices.Contains(hidden, x)))
	}
	if !below {
		if write {
			out.ReadWrite = append(out.ReadWrite, g)
		} else {
			out.ReadOnly = append(out.ReadOnly, g)
		}
		return nil
	}
	entries, err := os.ReadDir(g)
	if err != nil {
		return fmt.Errorf("grant %s without what it holds of %s: %w", g, strings.Join(slices.Concat(hidden, readOnly), ", "), err)
	}
	out.ListOnly = append(out.ListOnly, g)
	for _, e := range entries {
		path := filepath.Join(g, e.Name())
		if slices.Contains(hidden, path) || !(e.Type().IsDir() || e.Type().IsRegular()) {
			continue
		}
		if err := out.grant(path, write, hidden, readOnly); err != nil {
			return err
		}
	}
	return nil
}

// within reports whether p is dir or below it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
