package serve

import "testing"

// studioURL is publicUrl when halo.json sets one, else the listening address, with
// localhost for an address that listens on every interface.
func TestStudioURL(t *testing.T) {
	for _, c := range []struct{ listening, public, want string }{
		{"127.0.0.1:8080", "", "http://127.0.0.1:8080/"},
		{"0.0.0.0:9000", "", "http://localhost:9000/"},
		{"[::]:9000", "", "http://localhost:9000/"},
		{"[::1]:8080", "", "http://[::1]:8080/"},
		{"10.0.0.7:8080", "", "http://10.0.0.7:8080/"},
		{"127.0.0.1:8080", "https://halo.example.com/", "https://halo.example.com/"},
		{"127.0.0.1:8080", "https://halo.example.com/studio", "https://halo.example.com/studio/"},
	} {
		if got := studioURL(c.listening, c.public); got != c.want {
			t.Errorf("studioURL(%q, %q) = %q, want %q", c.listening, c.public, got, c.want)
		}
	}
}
