package detect

import (
	"testing"

	"halolang.dev/halo/host/policy/internal/corpus"
)

func BenchmarkScanSafe16K(b *testing.B) {
	s := corpus.Build(16<<10, 1, true)
	if got := len(Scan(s, PII|APIKey)); got != len(corpus.Secrets) {
		b.Fatalf("found %d secrets, want %d", got, len(corpus.Secrets))
	}
	corpus.Loop(b, len(s), func() { Scan(s, PromptInjection|DestructiveOps|PII|APIKey) })
}

func BenchmarkScanSafe10M(b *testing.B) {
	s := corpus.Build(10<<20, 2, false)
	corpus.Loop(b, len(s), func() { Scan(s, PromptInjection|DestructiveOps|PII|APIKey) })
}
