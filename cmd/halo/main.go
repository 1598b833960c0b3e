// Command halo validates, runs and serves Halo pipelines. All behaviour lives in the
// packages under internal/; main only hands them the process's streams and environment.
package main

import (
	"os"

	"github.com/halo-lang/halo/cmd/halo/internal/root"
)

func main() {
	os.Exit(root.Main(os.Args[1:], root.ProcessSystem()))
}
