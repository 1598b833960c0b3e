package runtime

import (
	"reflect"
	"testing"
)

// TestMocksForkCopyOnWrite: a run's mocks (fork) share the runtime's table without copying
// it, yet a mock set after a run started is not seen by that run, each run's script starts
// from its first element whatever another run used up, and cursors and seek carry one
// run's place in its scripts only.
func TestMocksForkCopyOnWrite(t *testing.T) {
	m := NewMocks()
	m.Set("A.fixed", "one")
	m.Set("A.script", []any{"first", "second"})
	ask := func(f *Mocks, target string) any {
		t.Helper()
		v, ok, err := f.answer(MockRequest{Target: target}, target)
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", target, ok, err)
		}
		return v
	}
	before := m.fork()
	if got := ask(before, "A.script"); got != "first" {
		t.Fatalf("first answer %v", got)
	}
	m.Set("A.fixed", "two")
	m.SetFunc("A.new", func(MockRequest) (any, error) { return "fn", nil })
	if got := ask(before, "A.fixed"); got != "one" {
		t.Errorf("a run saw a mock set after it started: %v", got)
	}
	if before.Has("A.new") {
		t.Error("a run saw a target mocked after it started")
	}
	after := m.fork()
	if got := ask(after, "A.fixed"); got != "two" {
		t.Errorf("a later run answers %v, want the new mock", got)
	}
	if got := ask(after, "A.new"); got != "fn" {
		t.Errorf("a later run answers %v from the new function", got)
	}
	if got := ask(after, "A.script"); got != "first" {
		t.Errorf("a later run's script starts at %v, want its first element", got)
	}
	if got, want := before.cursors(), map[string]int{"A.script": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("cursors %v, want %v", got, want)
	}
	if c := m.fork().cursors(); c != nil {
		t.Errorf("a run that used no script reports cursors %v", c)
	}
	resumed := m.fork()
	resumed.seek(before.cursors())
	if got := ask(resumed, "A.script"); got != "second" {
		t.Errorf("a resumed run goes on at %v, want the second element", got)
	}
	if _, _, err := resumed.answer(MockRequest{}, "A.script"); codeOf(err) != CodeMock {
		t.Errorf("a used-up script answers %v, want %s", err, CodeMock)
	}
	// Setting a script again in a run starts it again.
	resumed.Set("A.script", []any{"again"})
	if got := ask(resumed, "A.script"); got != "again" {
		t.Errorf("a script set again answers %v", got)
	}
}
