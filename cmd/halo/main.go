// Command halo validates, runs and serves Halo pipelines. All behaviour lives in the
// packages under internal/; main hardens the process and hands the packages its streams and
// environment.
package main

import (
	"fmt"
	"os"

	"github.com/halo-lang/halo/cmd/halo/internal/root"
	"github.com/halo-lang/halo/host/tool/sandbox"
)

func main() {
	os.Exit(halo())
}

// halo is the whole command. It hardens the process before anything else, and so before
// anything could start a child (sandbox.HardenProcess): no plugin or MCP server ever runs
// beside a halo whose /proc entries it could read.
func halo() int {
	if err := sandbox.HardenProcess(); err != nil {
		fmt.Fprintf(os.Stderr, "halo: %v\n", err)
		return 1
	}
	return root.Main(os.Args[1:], root.ProcessSystem())
}
