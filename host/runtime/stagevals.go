package runtime

// stageValues holds the flowing value each stage of a list received or returned, by index,
// for loops going back and for a paused run's ResumePoint. A slice by index, not a map: a
// map cost a run two allocations (and ~240 bytes) each for its inputs and its outputs,
// even with one stage; the two slices are made as one (run.stageRoom). An index outside the list (only a record's, read back) is kept
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
func (s *stageValues) put(i int, v any) {
	if i < 0 || i >= len(s.vals) {
		if s.other == nil {
			s.other = map[int]any{}
		}
		s.other[i] = v
		return
	}
	s.vals[i] = stageValue{v: v, set: true}
}

// putIn and putOut set stage i's input and output. The first makes room for both, in one
// allocation.
func (rn *run) putIn(i int, v any) {
	rn.stageRoom()
	rn.stageIn.put(i, v)
}

func (rn *run) putOut(i int, v any) {
	rn.stageRoom()
	rn.stageOut.put(i, v)
}

func (rn *run) stageRoom() {
	if n := len(rn.list); rn.stageIn.vals == nil && n > 0 {
		both := make([]stageValue, 2*n)
		rn.stageIn.vals, rn.stageOut.vals = both[:n:n], both[n:]
	}
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
