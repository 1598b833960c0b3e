//go:build race

package policy

// raceOn is set when tests run under the race detector, which slows detection ~10x.
const raceOn = true
