package bigprog

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

// out names a file TestWrite fills with a generated program of -size bytes, the input
// scripts/bench-validate.sh times `halo validate` on:
//
//	go test ./internal/bigprog -run TestWrite -args -o big.halo
var (
	out  = flag.String("o", "", "write the generated program to this file")
	size = flag.Int("size", 1<<20, "bytes of program for -o (at least)")
)

func TestWrite(t *testing.T) {
	if *out == "" {
		t.Skip("no -o file named: this test only writes the benchmark's input")
	}
	if err := os.WriteFile(*out, Generate(*size), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGenerate(t *testing.T) {
	src := Generate(100 << 10)
	if len(src) < 100<<10 || len(src) > 100<<10+len(block)+64 {
		t.Errorf("%d bytes for 100 KiB", len(src))
	}
	// Every block has names of its own, numbered from 0.
	for _, want := range []string{"policy Rules0 :", "tool Code0 :", "pipeline Fix0(", "item: Item0)", "total: Number }", "{{workdir}}"} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("no %q", want)
		}
	}
	if bytes.Contains(src, []byte("{n}")) {
		t.Error("a {n} left unreplaced")
	}
}
