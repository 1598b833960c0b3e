package runtime

import (
	"reflect"
	"testing"

	"halolang.dev/halo/host/lang"
)

// A ResumePoint saves the stages' values as the maps did: those set, an index a record
// brought from outside the list kept as it was, and an empty map (not nil) when none is.
func TestStageValuesSaved(t *testing.T) {
	rn := &run{list: make([]*lang.Stage, 3)}
	if got := rn.stageIn.saved(); got == nil || len(got) != 0 {
		t.Fatalf("empty: %#v", got)
	}
	rn.putIn(0, "a")
	rn.putIn(2, nil)
	rn.putIn(7, "far")
	rn.putIn(-1, "before")
	rn.putOut(1, "out")
	s := &rn.stageIn
	want := map[int]any{0: "a", 2: nil, 7: "far", -1: "before"}
	if got := s.saved(); !reflect.DeepEqual(got, want) {
		t.Fatalf("saved %#v, want %#v", got, want)
	}
	if s.get(0) != "a" || s.get(1) != nil || s.get(7) != "far" || s.get(9) != nil {
		t.Fatalf("get: %v %v %v %v", s.get(0), s.get(1), s.get(7), s.get(9))
	}
	if got := rn.stageOut.saved(); !reflect.DeepEqual(got, map[int]any{1: "out"}) {
		t.Fatalf("outputs saved %#v", got)
	}
}
