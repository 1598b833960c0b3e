package runtime

import "sync"

// shares counts a run's lines of execution that may still make a model call and hold no
// MaxSpend reservation now: one for the pipeline, one per branch while a fan-out runs. A model
// call under a spend limit caps its reply at its share of what is left of the budget, so the
// first branch of a fan-out cannot reserve the whole budget and starve the others.
type shares struct {
	mu sync.Mutex
	n  int
}

func newShares() *shares { return &shares{n: 1} }

func (s *shares) add(d int) {
	s.mu.Lock()
	s.n += d
	s.mu.Unlock()
}

// idle returns how many lines share what is left (at least 1: the caller's own).
func (s *shares) idle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.n, 1)
}

// hold and release bracket a model call's reservation.
func (s *shares) hold()    { s.add(-1) }
func (s *shares) release() { s.add(1) }

// fork replaces the calling line by k branches; each branch calls end when it is done, and
// the caller joins after all have.
func (s *shares) fork(k int) { s.add(k - 1) }
func (s *shares) end()       { s.add(-1) }
func (s *shares) join()      { s.add(1) }
