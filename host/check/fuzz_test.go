package check

import (
	"os"
	"path/filepath"
	"testing"

	"halolang.dev/halo/host/lang"
)

// FuzzCheck: whatever parses, the checker handles without panicking.
func FuzzCheck(f *testing.F) {
	for _, glob := range []string{"../../examples/*.halo", "testdata/bad/*.halo", "../lang/testdata/*/*.halo"} {
		files, _ := filepath.Glob(glob)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, _ := lang.Parse("f.halo", src)
		for _, d := range Check(&lang.Program{Files: []*lang.File{file}}, testConfig(lockProviders)) {
			if !d.Pos.IsValid() || d.Code == "" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
	})
}
