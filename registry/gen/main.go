// Command gen rebuilds the default registry from registry/src:
//
//	go run ./registry/gen          # index.json and packages/ (committed; http and mcp packages)
//	go run ./registry/gen -local   # local/ (not committed): module packages built for this machine
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
	"runtime"
	"time"

	"github.com/halo-lang/halo/pkgmgr"
	"github.com/halo-lang/halo/registry/generate"
)

func main() {
	local := flag.Bool("local", false, "build the module packages (world-time) for this machine into registry/local")
	root := flag.String("root", "registry", "the registry folder")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src := *root + "/src"
	var err error
	if *local {
		platform := runtime.GOOS + "/" + runtime.GOARCH
		opts := pkgmgr.PackOptions{Build: pkgmgr.GoBuilder("go", os.Environ()), Platforms: []string{platform}}
		err = generate.GenerateLocal(ctx, src, *root+"/local", time.Now(), opts)
	} else {
		err = generate.Generate(ctx, src, *root, time.Now())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
