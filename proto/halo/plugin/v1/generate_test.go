package pluginv1_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// root is the module root, three folders up from this package.
const root = "../../../.."

// TestGeneratedCodeIsFresh fails when the committed Go code does not match plugin.proto.
//
// Every run checks proto/generated.sha256, the stamp scripts/proto.sh writes beside the code
// it generates: an edited .proto or buf config without regeneration, or a hand-edited .pb.go,
// changes a hash. That takes milliseconds and needs no protoc or buf.
//
// With HALO_PROTO_REGEN=1 it also regenerates into a temporary folder with the pinned
// generators and compares byte for byte, which catches a stamp rewritten by hand. It compiles
// buf (minutes on a cold cache), so scripts/test.sh runs it once as its own step rather than
// inside every `go test ./...`.
func TestGeneratedCodeIsFresh(t *testing.T) {
	f, err := os.Open(filepath.Join(root, "proto/generated.sha256"))
	if err != nil {
		t.Fatalf("no stamp: run scripts/proto.sh: %v", err)
	}
	defer f.Close()
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("bad stamp line %q", sc.Text())
		}
		listed[name] = true
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s is in the stamp but cannot be read: %v; run scripts/proto.sh", name, err)
			continue
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s changed since the code was generated: run scripts/proto.sh (or go generate ./... in proto/) and commit the result", name)
		}
	}
	// A new .proto or .pb.go that the stamp does not know means generation was not rerun.
	_ = filepath.WalkDir(filepath.Join(root, "proto"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasSuffix(p, ".proto") || strings.HasSuffix(p, ".pb.go") {
			rel, _ := filepath.Rel(root, p)
			if !listed[filepath.ToSlash(rel)] {
				t.Errorf("%s is not in proto/generated.sha256: run scripts/proto.sh", rel)
			}
		}
		return nil
	})

	if os.Getenv("HALO_PROTO_REGEN") != "1" {
		t.Log("stamp checked; set HALO_PROTO_REGEN=1 to regenerate with buf and diff as well")
		return
	}
	regenerateAndDiff(t)
}

// bufVersion is the buf scripts/proto.sh and scripts/npm/buf pin.
const bufVersion = "v1.75.0"

func regenerateAndDiff(t *testing.T) {
	tmp := t.TempDir()
	for _, name := range []string{"buf.yaml", "buf.gen.yaml", "proto/halo/plugin/v1/plugin.proto"} {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	// HALO_BUF names a buf binary of the pinned version (scripts/test.sh installs a prebuilt one
	// from npm); without it buf is compiled from source, which takes minutes.
	cmd := exec.CommandContext(ctx, "go", "run", "github.com/bufbuild/buf/cmd/buf@"+bufVersion, "generate")
	if buf := os.Getenv("HALO_BUF"); buf != "" {
		if out, err := exec.CommandContext(ctx, buf, "--version").Output(); err != nil || strings.TrimSpace(string(out)) != strings.TrimPrefix(bufVersion, "v") {
			t.Fatalf("HALO_BUF=%s is not buf %s (got %q, %v)", buf, bufVersion, out, err)
		}
		cmd = exec.CommandContext(ctx, buf, "generate")
	}
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("buf generate: %v\n%s", err, out)
	}
	for _, name := range []string{"proto/halo/plugin/v1/plugin.pb.go", "proto/halo/plugin/v1/plugin_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what the pinned generators produce: run scripts/proto.sh and commit the result", name)
		}
	}
}
