//go:build !race

package serve_test

// raceOn says the tests run with the race detector, which slows the server several times over.
const raceOn = false
