package runtime

import (
	"reflect"
	"testing"
)

// A ResumePoint saves the stages' values as the maps did: those set, an index a record
// brought from outside the list kept as it was, and an empty map (not nil) when none is.
func TestStageValuesSaved(t *testing.T) {
	var s stageValues
	if got := s.saved(); got == nil || len(got) != 0 {
		t.Fatalf("empty: %#v", got)
	}
	s.put(3, 0, "a")
	s.put(3, 2, nil)
	s.put(3, 7, "far")
	s.put(3, -1, "before")
	want := map[int]any{0: "a", 2: nil, 7: "far", -1: "before"}
	if got := s.saved(); !reflect.DeepEqual(got, want) {
		t.Fatalf("saved %#v, want %#v", got, want)
	}
	if s.get(0) != "a" || s.get(1) != nil || s.get(7) != "far" || s.get(9) != nil {
		t.Fatalf("get: %v %v %v %v", s.get(0), s.get(1), s.get(7), s.get(9))
	}
}
