package runtime

// stageValues holds the flowing value each stage of a list received or returned, by index,
// for loops going back and for a paused run's ResumePoint. A slice by index, not a map: a
// map cost a run two allocations (and ~240 bytes) each for its inputs and its outputs,
// even with one stage. An index outside the list (only a record's, read back) is kept
// apart so the record saves it again as it was.
type stageValues struct {
	vals  []stageValue
	other map[int]any
}

type stageValue struct {
	v   any
	set bool
}

// put sets stage i's value.
func (s *stageValues) put(n, i int, v any) {
	if i < 0 || i >= n {
		if s.other == nil {
			s.other = map[int]any{}
		}
		s.other[i] = v
		return
	}
	if s.vals == nil {
		s.vals = make([]stageValue, n)
	}
	s.vals[i] = stageValue{v: v, set: true}
}

// get is stage i's value, nil when it has none.
func (s *stageValues) get(i int) any {
	if i >= 0 && i < len(s.vals) {
		return s.vals[i].v
	}
	return s.other[i]
}

// saved is the values as a ResumePoint keeps them: never nil, as the maps it replaces were not.
func (s *stageValues) saved() map[int]any {
	m := make(map[int]any, len(s.vals)+len(s.other))
	for i, sv := range s.vals {
		if sv.set {
			m[i] = sv.v
		}
	}
	for i, v := range s.other {
		m[i] = v
	}
	return m
}
