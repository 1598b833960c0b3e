package pkgmgr

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func gzipped(t testing.TB, data []byte) string {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// allocated returns how many bytes f allocates (all goroutines; the test runs alone).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Gzip bombs are refused before they fill memory. The one the review used: a 3.4 MB
// .halotool of plain files, each 64 MiB of gzipped zeros (2.7 GB inflated before the sizes
// were checked), is refused without inflating anything, since only executables may be
// compressed. And executables, which may, share one running count: seven platforms of 64 MiB
// each stop at MaxUnpackedSize.
func TestGzipBombs(t *testing.T) {
	zeros := base64.StdEncoding.EncodeToString([]byte(gzipped(t, make([]byte, MaxExecutableSize))))

	var plain []wireFile
	for i := 0; len(plain)*len(zeros) < 3400_000; i++ {
		plain = append(plain, wireFile{Path: fmt.Sprintf("zeros-%02d.bin", i), Gzip: true, Data: zeros})
	}
	bomb := rawPackage(t, acmeManifest, plain)
	var err error
	n := allocated(func() { _, err = ReadPackage(bomb) })
	if Code(err) != CodeInvalid || !strings.Contains(err.Error(), "only a module executable may be gzip-compressed") {
		t.Fatalf("%d plain files of gzipped zeros: %v", len(plain), err)
	}
	if n > 64<<20 {
		t.Fatalf("a %.1f MB package of gzipped plain files allocated %d MiB before it was refused", float64(len(bomb))/1e6, n>>20)
	}
	t.Logf("%.1f MB, %d plain files of gzipped zeros: refused after allocating %d MiB", float64(len(bomb))/1e6, len(plain), n>>20)

	platforms := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64", "freebsd/amd64"}
	var execs []string
	var files []wireFile
	for _, p := range platforms {
		name := "bin/" + strings.ReplaceAll(p, "/", "-") + "/m"
		execs = append(execs, fmt.Sprintf("%q:%q", p, name))
		files = append(files, wireFile{Path: name, Executable: true, Gzip: true, Data: zeros})
	}
	module := `{"name":"m","version":"1.0.0","description":"d","providers":{"M":{"kind":"module","description":"d","executables":{` + strings.Join(execs, ",") + `}}}}`
	bomb = rawPackage(t, module, files)
	n = allocated(func() { _, err = ReadPackage(bomb) })
	if Code(err) != CodeInvalid || !strings.Contains(err.Error(), fmt.Sprintf("more than the %d MiB limit for all files once uncompressed", MaxUnpackedSize>>20)) {
		t.Fatalf("%d executables of %d MiB: %v", len(files), MaxExecutableSize>>20, err)
	}
	if n > MaxUnpackedSize+16<<20 {
		t.Fatalf("%d executables of gzipped zeros allocated %d MiB, over the %d MiB limit", len(files), n>>20, MaxUnpackedSize>>20)
	}
	t.Logf("%.1f MB, %d executables of gzipped zeros: refused after allocating %d MiB", float64(len(bomb))/1e6, len(files), n>>20)
}
