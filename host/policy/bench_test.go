package policy

import (
	"regexp"
	"strings"
	"testing"

	"halolang.dev/halo/host/policy/internal/corpus"
)

// safe is the seed's Safe policy: Block(PromptInjection, DestructiveOps) & Redact(PII, APIKey).
func safe(tb testing.TB) Set {
	return Set{MustCompile("Safe", []RuleSpec{
		{Name: "Block", Args: []any{Ident("PromptInjection"), Ident("DestructiveOps")}},
		{Name: "Redact", Args: []any{Ident("PII"), Ident("APIKey")}},
	})}
}

// BenchmarkSafe16K: a 16 KB tool result holding a few secrets, through the input phase.
// Target: under 1 ms.
func BenchmarkSafe16K(b *testing.B) {
	s := safe(b)
	in := corpus.Build(16<<10, 1, true)
	out, err := s.Input(in)
	if err != nil {
		b.Fatal(err)
	}
	for _, secret := range corpus.Secrets {
		if strings.Contains(out, secret) {
			b.Fatalf("secret %q not redacted", secret)
		}
	}
	corpus.Loop(b, len(in), func() { _, _ = s.Input(in) })
}

// BenchmarkSafe10M: 10 MB of mixed prose, code and JSON with no secrets. Target: at least
// 70 MB/s on one core.
func BenchmarkSafe10M(b *testing.B) {
	s := safe(b)
	in := corpus.Build(10<<20, 2, false)
	if _, err := s.Input(in); err != nil {
		b.Fatal(err)
	}
	corpus.Loop(b, len(in), func() { _, _ = s.Input(in) })
}

// BenchmarkFloorRegexp1M is the floor the detectors are measured against, in the same run:
// the obvious implementation, one Go regexp per category over the whole text (and still
// blind to look-alikes).
func BenchmarkFloorRegexp1M(b *testing.B) {
	res := []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:previous|prior|above)\s+instructions\b`),
		regexp.MustCompile(`(?i)\b(?:drop\s+table|truncate\s+table|delete\s+from|rm\s+-rf|git\s+push\s+--force|mkfs)\b`),
		regexp.MustCompile(`\b\d{3}-\d{2}-\d{4}\b`),
		regexp.MustCompile(`\b(?:\d[ -]?){13,19}\b`),
		regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`),
		regexp.MustCompile(`\(?\b\d{3}\)?[-. ]\d{3}[-. ]\d{4}\b`),
		regexp.MustCompile(`\b(?:sk-[A-Za-z0-9_-]{32,}|AKIA[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{36,}|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35})`),
	}
	in := corpus.Build(1<<20, 2, false) // 1 MB: this floor is slow
	corpus.Loop(b, len(in), func() {
		for _, re := range res {
			re.FindAllStringIndex(in, -1)
		}
	})
}
