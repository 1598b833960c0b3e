// Command gen rebuilds the default registry from registry/src:
//
//	go run ./registry/gen          # index.json and packages/ (committed; http and mcp packages)
//	go run ./registry/gen -local   # local/ (not committed): module packages, built for every platform they list
//	go run ./registry/gen -local -platform linux/amd64   # only some platforms (a quicker local build)
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

	"github.com/halo-lang/halo/pkgmgr"
	"github.com/halo-lang/halo/registry/generate"
)

func main() {
	local := flag.Bool("local", false, "build the module packages (world-time) into registry/local, for every platform their manifests list")
	only := flag.String("platform", "", "with -local: build only these platforms (comma-separated GOOS/GOARCH); the package then differs from the released one")
	root := flag.String("root", "registry", "the registry folder")
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
	var err error
	if *local {
		opts := pkgmgr.PackOptions{Build: pkgmgr.GoBuilder("go", os.Environ())}
		if *only != "" {
			opts.Platforms = strings.Split(*only, ",")
		}
		err = generate.GenerateLocal(ctx, src, *root+"/local", now, opts)
	} else {
		err = generate.Generate(ctx, src, *root, now)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
