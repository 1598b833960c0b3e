// Package treestate describes a folder tree as text: one line per file, folder and symbolic
// link, with its mode and, for a file, the sha256 of its content. Tests compare two
// descriptions to prove that a failed operation (a refused `halo add`) changed nothing at all.
package treestate

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Describe returns root's lines, sorted, joined by newlines; a missing root describes as
// empty. skip, when not nil, leaves out the entries whose path relative to root it names.
func Describe(root string, skip func(rel string) bool) (string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if skip != nil && skip(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := rel + " " + info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s := sha256.Sum256(b)
			line += " " + hex.EncodeToString(s[:])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}
