package runtime

import "os"

// SetSyncFile replaces how s syncs a record's file before its commit renames it into place:
// tests watch what is synced, or make syncing fail.
func SetSyncFile(s *Store, sync func(*os.File) error) { s.commits.syncFile = sync }

// SetNaming sets how s's commits name a record's file, as on a system that can do less:
// "fd" (linkat of the unnamed file's descriptor, the first way tried), "proc" (linkat of its
// /proc/self/fd link), "none" (neither: the first commit finds out and writes the record
// again with a temporary name), "temp" (a temporary name from the start, as where files
// cannot be made without a name).
func SetNaming(s *Store, how string) {
	c := &s.commits
	c.named = how == "temp"
	switch how {
	case "fd":
		c.link = linkFD
	case "proc":
		c.link = linkProc
	default:
		c.link = linkNone
	}
}

// SetLogLimit sets the size from which s starts a new run log.
func SetLogLimit(s *Store, n int64) { s.commits.logLimit = n }

// SetLogLineCap sets the longest log line s reads.
func SetLogLineCap(s *Store, n int) { s.commits.lineCap = n }
