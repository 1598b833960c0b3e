package pkgmgr

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoBuilder returns a BuildFunc that runs the go command found at goBin ("go" to search
// PATH) with the environment env (the CLI's, never read here): CGO_ENABLED=0, -trimpath and
// -ldflags="-s -w -buildid=", so the same source and toolchain give the same bytes; and
// -buildvcs=false, since the stamp of the commit and of uncommitted changes would make every
// commit of the repository a different executable, and a package's sha256 with it.
func GoBuilder(goBin string, env []string) BuildFunc {
	return func(ctx context.Context, dir, goPkg, platform string) ([]byte, error) {
		goos, goarch, ok := strings.Cut(platform, "/")
		if !ok || !platforms[platform] {
			return nil, fmt.Errorf("unknown platform %q", platform)
		}
		out, err := os.MkdirTemp("", "halo-build-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(out)
		exe := filepath.Join(out, "plugin")
		cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid=", "-o", exe, goPkg)
		cmd.Dir = dir
		cmd.Env = append(append([]string(nil), env...), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=-mod=readonly")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		killGroup(cmd)
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("go build: %w\n%s", err, strings.TrimSpace(stderr.String()))
		}
		return os.ReadFile(exe)
	}
}
