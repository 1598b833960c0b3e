//go:build race

package main

// raceOn is set when the tests run under the race detector, whose runtime changes what some
// package inits allocate (prometheus/client_golang: 0.8 to 1.2 MB instead of 65 KB).
const raceOn = true
