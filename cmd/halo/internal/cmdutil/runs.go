package cmdutil

import (
	"path/filepath"

	"halolang.dev/halo/host/runstore"
)

// RunsDir is the run store's folder in the working folder: .halo/runs.
func (f *Factory) RunsDir() string { return filepath.Join(f.Dir, ".halo", "runs") }

// OpenRuns opens the embedded run store in .halo/runs with opts, its clock and logger the
// factory's. The caller closes it.
func (f *Factory) OpenRuns(opts runstore.SQLiteOptions) (*runstore.SQLite, error) {
	if opts.Now == nil {
		opts.Now = f.Now
	}
	if opts.Logger == nil {
		opts.Logger = f.Logger
	}
	return runstore.OpenSQLite(f.RunsDir(), opts)
}
