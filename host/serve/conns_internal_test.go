package serve

import (
	"slices"
	"testing"
)

// The evictable connections stay in the order they became evictable: a request with the
// token takes its connection out, and puts it back as the newest; a closed one leaves.
func TestIdleOrder(t *testing.T) {
	set := &conns{cap: 16}
	a, b, c := &conn{set: set}, &conn{set: set}, &conn{set: set}
	names := map[*conn]string{a: "a", b: "b", c: "c"}
	for _, cn := range []*conn{a, b, c} {
		set.open++
		set.idle.pushBack(cn)
	}
	order := func() []string {
		var fwd, back []string
		for cn := set.idle.front; cn != nil; cn = cn.next {
			fwd = append(fwd, names[cn])
		}
		for cn := set.idle.back; cn != nil; cn = cn.prev {
			back = append(back, names[cn])
		}
		slices.Reverse(back)
		if !slices.Equal(fwd, back) {
			t.Fatalf("the list forwards %v, backwards %v", fwd, back)
		}
		return fwd
	}
	check := func(step string, want ...string) {
		t.Helper()
		if got := order(); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", step, got, want)
		}
	}
	check("accepted", "a", "b", "c")
	b.protect()
	b.protect() // two requests at once on b
	check("b busy", "a", "c")
	b.unprotect()
	check("b still busy", "a", "c")
	b.unprotect()
	check("b idle again", "a", "c", "b")
	set.mu.Lock()
	a.forget() // as Close does
	set.mu.Unlock()
	c.protect()
	check("a closed, c busy", "b")
	c.unprotect()
	check("c idle", "b", "c")
	if set.open != 2 {
		t.Errorf("%d open, want 2", set.open)
	}
}
