// Package corpus builds the deterministic benchmark texts of host/policy: mixed English
// prose, Go code and JSON, optionally with a few secrets planted, so benchmarks of the
// detectors and the Safe policy measure the same bytes on every run.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var prose = []string{
	"The quarterly report summarises revenue by region, and the tables at the end list every refund we issued.",
	"Customers asked whether the new plan covers overseas shipping; support answered within two hours on average.",
	"Please review the attached draft before Thursday, and note any section that still needs a source.",
	"We dropped the legacy importer after the migration, since nobody had used it for a year.",
	"Version 2.4.1 fixes the crash on startup and improves the speed of search by about 30 percent.",
	"Meeting notes: the team agreed to ship the feature behind a flag and to revisit the design in March.",
	"Don't forget the instructions in the README: run the tests before you push, and keep commits small.",
	"The café on the corner serves crème brûlée on Fridays — a small treat after a long week.",
}

var code = []string{
	"func (s *Server) handle(w http.ResponseWriter, r *http.Request) {\n\tctx := r.Context()\n\tif err := s.store.Put(ctx, key, value); err != nil {\n\t\thttp.Error(w, err.Error(), 500)\n\t\treturn\n\t}\n}\n",
	"for i := 0; i < len(items); i++ {\n\ttotal += items[i].Price * float64(items[i].Qty)\n}\n",
	"// Delete removes the entry; it is safe to call twice.\nfunc (c *Cache) Delete(k string) { c.mu.Lock(); delete(c.m, k); c.mu.Unlock() }\n",
	"SELECT id, name, created_at FROM users WHERE org_id = $1 ORDER BY created_at DESC LIMIT 50;\n",
}

var jsonRecs = []string{
	`{"id": %d, "name": "item-%d", "price": %d.99, "tags": ["a", "b"], "active": true, "updated": "2024-03-%02dT10:00:00Z"}`,
	`{"event": "page_view", "user": %d, "path": "/docs/%d", "ms": %d, "day": %d}`,
}

// Secrets are the values Build plants when asked: an email, an SSN, a card, a phone number
// and three API keys.
var Secrets = []string{
	"jane.doe@example.com",
	"123-45-6789",
	"4111 1111 1111 1111",
	"(415) 555-2671",
	Keys().OpenAIProject,
	"AKIAIOSFODNN7EXAMPLE",
	Keys().GitHub,
}

// Build returns about n bytes of mixed text from seed; with secrets, every Secret is
// planted once, spread through the text.
func Build(n int, seed uint64, secrets bool) string {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	b.Grow(n + 512)
	planted := 0
	for b.Len() < n {
		switch rng.IntN(3) {
		case 0:
			b.WriteString(prose[rng.IntN(len(prose))])
			b.WriteString(" ")
		case 1:
			b.WriteString(code[rng.IntN(len(code))])
		default:
			k := rng.IntN(1000)
			fmt.Fprintf(&b, jsonRecs[rng.IntN(len(jsonRecs))], k, k*7, k%90, k%28+1)
			b.WriteString("\n")
		}
		if secrets && planted < len(Secrets) && b.Len() > (planted+1)*n/(len(Secrets)+1) {
			b.WriteString("contact: ")
			b.WriteString(Secrets[planted])
			b.WriteString("\n")
			planted++
		}
	}
	return b.String()
}

// Chunks returns n texts of about size bytes each, mixed prose, code and JSON, every one
// with the Secrets planted: what a tool loop feeds the policy engine.
func Chunks(size, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = Build(size, uint64(100+i), true)
	}
	return out
}
