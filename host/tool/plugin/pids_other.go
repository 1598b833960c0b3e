//go:build !linux

package plugin

// DefaultMaxProcs is the limit on the processes and threads of a plugin; outside Linux there
// is no way to set it here.
const DefaultMaxProcs = 1024

type pidsCgroup struct{}

func newPidsCgroup(int) (*pidsCgroup, error) { return nil, nil }

func (*pidsCgroup) join() error { return nil }

func (*pidsCgroup) remove() {}

func (*pidsCgroup) leave() {}

func limitProcesses(int, int) error { return nil }

func pidsStatus() string { return "processes are not limited outside Linux" }

func rlimitApplies(isolation) bool { return false }
