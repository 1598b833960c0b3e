package sdk

import (
	"context"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/sdk/internal/wire"
)

// A Call is the context of one method call. It is a context.Context, cancelled when the host
// cancels the call (a timeout, Ctrl-C, a run stopped): pass it to everything that can block.
type Call struct {
	context.Context
	info *wire.CallInfo
}

// Progress reports how far the call has got: filled of total units (total 0 when unknown),
// with a short message for people watching the run. It never blocks the method for long and
// does nothing once the call is over.
func (c *Call) Progress(filled, total float64, message string) {
	c.info.Progress(filled, total, message)
}

// Logger returns a logger whose lines reach the host's log under the provider's name, with
// the tool and method attached. Never write to standard output: the handshake owns it.
func (c *Call) Logger() hclog.Logger { return c.info.Logger }

// Tool returns the declared tool name (`Clock` in `tool Clock : WorldTime()`).
func (c *Call) Tool() string { return c.info.Tool }

// Method returns the name of the method being called.
func (c *Call) Method() string { return c.info.Method }

// State returns what the provider's Configure returned for this declaration, or nil.
func (c *Call) State() any { return c.info.State }

// StateOf returns the call's configured state as a T. It panics when Configure returned
// something else: that is a bug in the provider, not a bad call.
func StateOf[T any](c *Call) T {
	return c.info.State.(T)
}
