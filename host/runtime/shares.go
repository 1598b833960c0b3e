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

func (s *shares) add(d int) {
	s.mu.Lock()
	s.n += d
	s.mu.Unlock()
}

// reserve runs fn, which prices and reserves one model call, with the number of lines that
// share what is left (at least 1: the caller's own); when fn succeeds the caller's line holds
// a reservation until release. Reservations are made one at a time, so two branches cannot
// both see the budget before either has reserved.
func (s *shares) reserve(fn func(idle int) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := fn(max(s.n, 1)); err != nil {
		return err
	}
	s.n--
	return nil
}

// release ends a reservation reserve made (the call has settled).
func (s *shares) release() { s.add(1) }

// split replaces the calling line by k concurrent ones (the branches of a fan-out, the
// items of a |* each running at once) and returns the function that undoes it when they
// are done.
func (s *shares) split(k int) func() {
	if k <= 1 {
		return func() {}
	}
	s.add(k - 1)
	return func() { s.add(-(k - 1)) }
}
