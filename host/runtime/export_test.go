package runtime

import "os"

// SetSyncFile replaces how s syncs a record's file before its commit renames it into place:
// tests watch what is synced, or make syncing fail.
func SetSyncFile(s *Store, sync func(*os.File) error) { s.commits.syncFile = sync }
