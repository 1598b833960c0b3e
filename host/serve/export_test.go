package serve

import "time"

// SetListPoll sets how often s's runs list streams look at the store for changes made by
// other processes.
func SetListPoll(s *Server, d time.Duration) { s.listPoll = d }
