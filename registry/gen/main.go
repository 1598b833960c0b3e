// Command gen rebuilds the default registry from registry/src:
//
//	go run ./registry/gen          # index.json and packages/ (committed; http and mcp packages)
//	go run ./registry/gen -local   # local/ (not committed): module packages built for this machine
//	go run ./registry/gen -sign KEY  # index.json and packages/, every package signed with the project's key
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
	signWith := flag.String("sign", "", "sign every package with the project's secret key `FILE` (password in HALO_SIGN_PASSWORD when it is encrypted)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	src := *root + "/src"
	var err error
	if *local {
		// Packages built here are signed with a key made for this build, whose public half
		// (local/build.pub) the halo binary embeds beside the project's key; its secret half
		// is never written, so nothing else can be signed with it.
		var key *pkgmgr.SignKey
		if key, err = pkgmgr.GenerateSignKey(); err == nil {
			platform := runtime.GOOS + "/" + runtime.GOARCH
			opts := pkgmgr.PackOptions{Build: pkgmgr.GoBuilder("go", os.Environ()), Platforms: []string{platform}}
			if err = generate.GenerateLocal(ctx, src, *root+"/local", time.Now(), opts, key); err == nil {
				err = os.WriteFile(*root+"/local/build.pub", key.PublicKeyFile(), 0o644)
			}
		}
	} else {
		var key *pkgmgr.SignKey
		if *signWith != "" {
			var text []byte
			if text, err = os.ReadFile(*signWith); err == nil {
				key, err = pkgmgr.NewSignKey(text, func() (string, error) { return os.Getenv("HALO_SIGN_PASSWORD"), nil })
			}
		}
		if err == nil {
			err = generate.Generate(ctx, src, *root, time.Now(), key)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
