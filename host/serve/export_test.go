package serve

import "time"

// SetListPoll sets how often s's runs list streams look at the store for changes made by
// other processes.
func SetListPoll(s *Server, d time.Duration) { s.listPoll = d }

// Unauthenticated is how many requests without the token s is answering now.
func Unauthenticated(s *Server) int { return len(s.unauth) }

// SetNewID makes the servers built from cfg make run ids with f.
func SetNewID(cfg *Config, f func() string) { cfg.newID = f }
