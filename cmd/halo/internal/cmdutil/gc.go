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
