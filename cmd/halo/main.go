// Command halo validates, runs and serves Halo pipelines. All behaviour lives in the
// packages under internal/; main hardens the process and hands the packages its streams and
// environment.
package main

import (
	"fmt"
	"os"

	"halolang.dev/halo/cmd/halo/internal/root"
	"halolang.dev/halo/host/tool/builtin"
	"halolang.dev/halo/host/tool/sandbox"
)

func main() {
	os.Exit(halo())
}

// halo is the whole command. It hardens the process before anything else, and so before
// anything could start a child (sandbox.HardenProcess): no plugin or MCP server ever runs
// beside a halo whose /proc entries it could read, nor inherits a descriptor halo did.
//
// halo started as a built-in plugin (`halo __plugin`) or as the sandbox wrapper only marks
// its inherited descriptors: the host that started it writes its user namespace's maps in
// /proc/<pid> just after the start, which a non-dumpable process would refuse (they would
// belong to root), and the wrapper executes another program at once.
func halo() int {
	harden := sandbox.HardenProcess
	if len(os.Args) > 1 && (os.Args[1] == builtin.PluginCommand || os.Args[1] == sandbox.Command) {
		harden = sandbox.CloseInherited
	}
	if err := harden(); err != nil {
		fmt.Fprintf(os.Stderr, "halo: %v\n", err)
		return 1
	}
	return root.Main(os.Args[1:], root.ProcessSystem())
}
