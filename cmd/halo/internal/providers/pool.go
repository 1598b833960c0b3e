package providers

import (
	"path/filepath"

	"halolang.dev/halo/cmd/halo/internal/cmdutil"
	"halolang.dev/halo/cmd/halo/internal/projconf"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/tool/pool"
	"halolang.dev/halo/pkgmgr"
)

// NewPool makes the pool of a command that serves many runs (halo serve, halo mcp): a
// plugin process or MCP connection no run uses stops after halo.json's toolIdleTimeout
// (0: when its run ends). The command closes it when it stops, after its runs.
func NewPool(f *cmdutil.Factory, cfg projconf.Config) *pool.Pool {
	idle := cfg.ToolIdleTimeout
	if idle == 0 {
		idle = -1 // pool: stop each member as its last lease ends
	}
	logger := f.Logger
	if logger != nil {
		logger = logger.Named("tools")
	}
	return pool.New(pool.Options{IdleTimeout: idle, Logger: logger})
}

// Watch retires the pooled processes when a file they were started under changes: one of
// the program's .halo files, or the project's halo.lock.
func Watch(pl *pool.Pool, f *cmdutil.Factory, prog *lang.Program) {
	files := []string{filepath.Join(f.Dir, pkgmgr.LockFile)}
	for _, file := range prog.Files {
		files = append(files, f.Abs(file.Name))
	}
	pl.Watch(files...)
}
