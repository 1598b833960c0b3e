// Command gen rebuilds the default registry from registry/src:
//
//	go run ./registry/gen          # index.json and packages/ (committed; http and mcp packages)
//	go run ./registry/gen -local   # local/ (not committed): module packages, built for every platform they list
//	go run ./registry/gen -local -platform linux/amd64   # only some platforms (a quicker local build)
//	go run ./registry/gen -sign KEY  # index.json and packages/, every package signed with the project's key
//	go run ./registry/gen -local -out DIR -url BASE [-sign KEY]  # a release's: files named by URL under BASE
//
// Run it from the repository root after changing a package under registry/src; the test in
// registry/ fails while the committed files are stale.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"halolang.dev/halo/pkgmgr"
	"halolang.dev/halo/registry/generate"
)

func main() {
	local := flag.Bool("local", false, "build the module packages (world-time) into registry/local, for every platform their manifests list")
	only := flag.String("platform", "", "with -local: build only these platforms (comma-separated GOOS/GOARCH); the package then differs from the released one")
	root := flag.String("root", "registry", "the registry folder")
	signWith := flag.String("sign", "", "sign every package with the project's secret key `FILE` (password in HALO_SIGN_PASSWORD when it is encrypted)")
	out := flag.String("out", "", "with -local: the folder to write into (default: ROOT/local)")
	baseURL := flag.String("url", "", "with -local: name each package file in the index by its URL under `BASE`, where a release publishes it")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src := *root + "/src"
	// SOURCE_DATE_EPOCH (the reproducible-builds convention; scripts/release.sh sets it to the
	// commit's time) fixes the publishedAt of new versions, so a release's index is the same
	// bytes on every machine.
	now := time.Now()
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" {
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gen: SOURCE_DATE_EPOCH:", err)
			os.Exit(2)
		}
		now = time.Unix(sec, 0)
	}
	var key *pkgmgr.SignKey
	var err error
	if *signWith != "" {
		var text []byte
		if text, err = os.ReadFile(*signWith); err == nil {
			key, err = pkgmgr.NewSignKey(text, func() (string, error) { return os.Getenv("HALO_SIGN_PASSWORD"), nil })
		}
	}
	if err == nil && *local {
		dir := *out
		if dir == "" {
			dir = *root + "/local"
		}
		// Without -sign, packages built here are signed with a key made for this build, whose
		// public half (build.pub) the halo binary embeds beside the project's key; its secret
		// half is never written, so nothing else can be signed with it.
		ephemeral := key == nil
		if ephemeral {
			key, err = pkgmgr.GenerateSignKey()
		}
		if err == nil {
			opts := pkgmgr.PackOptions{Build: pkgmgr.GoBuilder("go", os.Environ())}
			if *only != "" {
				opts.Platforms = strings.Split(*only, ",")
			}
			opts.Progress = func(i, n int, provider, platform string) {
				fmt.Fprintf(os.Stderr, "   [%d/%d] %s (%s)\n", i, n, platform, provider)
			}
			if err = generate.GenerateLocal(ctx, src, dir, now, opts, key, *baseURL); err == nil {
				pub := dir + "/build.pub"
				if ephemeral {
					err = os.WriteFile(pub, key.PublicKeyFile(), 0o644)
				} else if rmErr := os.Remove(pub); rmErr != nil && !os.IsNotExist(rmErr) {
					err = rmErr
				}
			}
		}
	} else if err == nil {
		err = generate.Generate(ctx, src, *root, now, key)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
