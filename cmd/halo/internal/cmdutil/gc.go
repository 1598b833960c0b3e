package cmdutil

import "runtime/debug"

// ServerGCPercent is the garbage collector's target for the servers (halo mcp, halo serve):
// a heap may grow to five times what is live before a collection, where Go's default is
// twice. Every call of a server is a whole run, which allocates a few tens of kilobytes and
// keeps almost nothing: with 16 clients calling halo mcp at once, collecting a quarter as
// often cut its processor time per call by 15 to 50% (more with run records off) and raised its peak resident
// memory from 64 MB to 105 MB (docs/cli.md says so to users).
const ServerGCPercent = 400

// ServerGC sets the garbage collector of a long-running server to ServerGCPercent, unless
// the environment sets GOGC: the user's choice wins (Go's runtime has read it already).
// It returns the setting it replaced, for tests.
func ServerGC(env Env) (previous int, set bool) {
	if _, ok := env.Lookup("GOGC"); ok {
		return 0, false
	}
	return debug.SetGCPercent(ServerGCPercent), true
}

// OneShotMemoryLimit is the soft memory limit under OneShotGC: the heap is collected when
// it would grow past it. halo validate of the largest file it reads (16 MB) peaks at about
// 450 MB resident (380 MB with the collector on), well under it.
const OneShotMemoryLimit = 1 << 30

// OneShotGC turns the garbage collector off, up to OneShotMemoryLimit, for a command that
// builds one structure that stays live until it exits (halo validate: the syntax tree and
// the diagnostics). Such a command frees almost nothing before it exits, so each collection
// only costs: for a 1 MB file they were a third of halo validate's processor time, and
// without them its peak resident memory grew from 81.6 to 83.4 MiB. GOGC or GOMEMLIMIT in
// the environment win (Go's runtime has read them already). It returns the percent it
// replaced, for tests.
func OneShotGC(env Env) (previous int, set bool) {
	if _, ok := env.Lookup("GOGC"); ok {
		return 0, false
	}
	if _, ok := env.Lookup("GOMEMLIMIT"); ok {
		return 0, false
	}
	debug.SetMemoryLimit(OneShotMemoryLimit)
	return debug.SetGCPercent(-1), true
}
