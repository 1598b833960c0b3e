package runstore

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"testing"
)

// E is a permutation: E⁻¹ undoes it, an id turns back into its key whatever the case of
// its letters or the 16 letters after it, and ids that are not 16 or 32 hex digits key
// as 0. Another secret makes other ids of the same keys.
func TestRunKeysPermutation(t *testing.T) {
	secret := make([]byte, 16)
	rand.Read(secret)
	k, err := newRunKeys(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := newRunKeys(make([]byte, 16))
	var buf [8]byte
	seen := map[string]bool{}
	for i := range 2000 {
		rand.Read(buf[:])
		v := binary.BigEndian.Uint64(buf[:])
		if i < 1000 {
			v = uint64(i) // the keys a store hands out: small, one after another
		}
		if got := k.decrypt(k.encrypt(v)); got != v {
			t.Fatalf("E⁻¹(E(%d)) = %d", v, got)
		}
		id := k.id(v)
		if len(id) != 16 || seen[id] {
			t.Fatalf("id %q of key %d: not 16 hex digits, or made twice", id, v)
		}
		seen[id] = true
		if k.of(id) != int64(v) || k.of(strings.ToUpper(id)) != int64(v) || k.of(id+"0123456789abcdef") != int64(v) {
			t.Fatalf("the key of %q is not %d", id, v)
		}
		if other.id(v) == id {
			t.Fatalf("two secrets made the same id of %d", v)
		}
	}
	// Consecutive keys do not make ids that begin alike: completion and text queries tell
	// runs apart by their first letters.
	firsts := map[byte]int{}
	for v := range uint64(256) {
		firsts[k.id(v)[0]]++
	}
	if len(firsts) < 12 {
		t.Errorf("256 consecutive keys made ids of %d first letters", len(firsts))
	}
	for _, id := range []string{"", "run-1", "0123456789abcde", "0123456789abcdeg", "0123456789abcdef0", "0123456789abcdef0123456789abcdeX"} {
		if got := k.of(id); got != 0 {
			t.Errorf("the key of %q: %d, want 0", id, got)
		}
	}
}

// The ids of a store are its keys under E: E may not change, or a store's runs would key
// elsewhere and not be found. These are the ids E made of these keys, under this secret,
// before its rounds shared their scratch (7 December 2026).
func TestRunKeysKnownAnswers(t *testing.T) {
	k, err := newRunKeys([]byte("0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key uint64
		id  string
	}{
		{0, "d982e40bd2cbaa99"},
		{1, "40429cfe0d8a6c8a"},
		{4096, "44a026579b9f5c6c"},
		{1 << 40, "510cdf2a2a686689"},
		{0xfedcba9876543210, "6bc7a31dd99cb7ae"},
	} {
		if got := k.id(c.key); got != c.id {
			t.Errorf("the id of key %d is %q, want %q", c.key, got, c.id)
		}
		if got := k.of(c.id); got != int64(c.key) {
			t.Errorf("the key of %q is %d, want %d", c.id, got, int64(c.key))
		}
	}
	// One allocation for each id or key made (the block cipher's scratch): one for each
	// round was 12.
	if n := testing.AllocsPerRun(100, func() { k.decrypt(k.encrypt(42)) }); n > 2 {
		t.Errorf("E and E⁻¹ of one key allocated %v times, want at most 2", n)
	}
}
