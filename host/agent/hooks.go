package agent

import (
	"context"

	"halolang.dev/halo/host/policy"
)

// Skipped is the decision of an agent_tool event for a call a person answered instead of
// letting it run (a debugger's skip): the model reads the person's value as the result.
const Skipped = "skipped"

// Hooks are told of each tool call the model asked for, once the policies have decided on it
// and before it is put to a person or runs: a debugger (host/debug) stops there. A nil Hooks
// costs the loop nothing.
type Hooks interface {
	// BeforeCall gets the call, the policies' decision and the conversation so far (st's
	// slices are the conversation's own: read them, do not keep or change them). It may
	// block. answered true makes answer the call's result instead of running it (no one is
	// asked for approval then), unless the policies refused the call, which never runs. An
	// error stops the conversation.
	BeforeCall(ctx context.Context, c Call, d policy.Decision, st State) (answer any, answered bool, err error)
}
