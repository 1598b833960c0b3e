package check

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"halolang.dev/halo/host/lang"
)

// FuzzCheck: whatever parses, the checker handles without panicking, and checked in parts
// at once it gets the same diagnostics in the same order.
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
		cfg := testConfig(lockProviders)
		diags := Check(&lang.Program{Files: []*lang.File{file}}, cfg)
		for _, d := range diags {
			if !d.Pos.IsValid() || d.Code == "" || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		if parts := checkInParts(file.Decls, cfg, 3); !reflect.DeepEqual(parts, diags) {
			t.Fatalf("in parts:\n%v\none checker:\n%v", parts, diags)
		}
	})
}
