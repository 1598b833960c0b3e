//go:build !unix

// Package cputime reads the processor time this process has used, the figure benchmarks
// report beside wall time: on a machine shared with other builds the wall clock swings with
// their load, and processor time much less.
package cputime

import "time"

// Self is 0 here: this system has no getrusage.
func Self() time.Duration { return 0 }
