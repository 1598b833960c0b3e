//go:build !linux

package ptytest

import (
	"errors"
	"os/exec"
	"time"
)

// A Terminal is a pseudo-terminal; outside Linux there is none here.
type Terminal struct{}

// ErrUnsupported says the attack tests' terminal is Linux's.
var ErrUnsupported = errors.New("ptytest: pseudo-terminals are made on Linux only")

// Open returns ErrUnsupported.
func Open() (*Terminal, error) { return nil, ErrUnsupported }

// Start returns ErrUnsupported.
func (*Terminal) Start(*exec.Cmd) error { return ErrUnsupported }

// Seen returns nothing.
func (*Terminal) Seen(time.Duration) string { return "" }

// Close does nothing.
func (*Terminal) Close() error { return nil }
