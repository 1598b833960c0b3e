package runtime

import (
	"context"
	"errors"
	"fmt"
)

// The channels a run can wait on beside the names `~> listen("...")` stages give.
const (
	// ChannelYield is what a |! yield waits for: a person's answer to its question.
	ChannelYield = "yield"
	// ChannelApproval is what a tool call that a policy puts up for approval waits for.
	ChannelApproval = "approval"
)

// An Interrupt is a question a run puts to whoever can answer it: a |! yield's question,
// a ~> listen stage's wait for a signal, a tool call waiting for approval. Config.OnInterrupt
// gets it before the run pauses.
type Interrupt struct {
	// RunID is the run that asks.
	RunID string `json:"runId"`
	// Channel is what the answer is for: "yield", a listen stage's channel name, or
	// "approval". It is the channel Runtime.Signal answers a paused run on.
	Channel string `json:"channel"`
	// Message is the text to show a person: a yield's question as text, what a listen
	// stage waits for, or for an approval "Allow Clerk to call Files.write with {...}?
	// (policy Careful)".
	Message string `json:"message"`
	// Named holds the request's details by name: a yield's question as written
	// ("question"); a listen's channel ("channel"); an approval's target ("Files.write"),
	// args (with the agent's Redact rules applied), policy and agent.
	Named map[string]any `json:"named,omitempty"`
	// At is where the asking stage is written (file:line:col).
	At string `json:"at,omitempty"`
}

// An InterruptFunc answers an Interrupt: the answer and true, or false for "no answer"
// (then the run pauses where it can, and fails where it cannot). An error fails the stage
// that asked. It may be called from several goroutines at once (the items of a |* each).
type InterruptFunc func(ctx context.Context, in Interrupt) (answer any, ok bool, err error)

// errPause is how a stage that waits stops the stages; exec turns it into a paused result.
// A yield or listen knows its stage; an approval, asked from deep inside an agent call, is
// placed at its stage by the stage loop that ran it (place).
type errPause struct {
	stage  int
	placed bool
	info   PauseInfo
	// agent is the agent call that waits for approval; nil for a yield or a listen.
	agent *AgentPause
}

func (e *errPause) Error() string { return "paused waiting for " + e.info.WaitingFor }

// pauseOf returns the pause err is or wraps, or nil. The variables errors.As fills escape,
// so a run that does not pause asks nothing of errors.As (three allocations a run saved).
func pauseOf(err error) *errPause {
	if err == nil {
		return nil
	}
	var pause *errPause
	if errors.As(err, &pause) {
		return pause
	}
	return nil
}

// place sets the stage the pause is at, unless a stage nested deeper set it.
func (e *errPause) place(stage int) {
	if !e.placed {
		e.stage, e.placed = stage, true
	}
}

// placeStart places the pause at the pipeline's start value.
func (e *errPause) placeStart() {
	if !e.placed {
		e.stage, e.placed = 0, true
		if e.agent != nil {
			e.agent.Start = true
		}
	}
}

// ask puts in to the runtime's OnInterrupt handler. ok is false when there is none or it
// gave no answer.
func (rn *run) ask(ctx context.Context, in Interrupt) (answer any, ok bool, err error) {
	h := rn.r.cfg.OnInterrupt
	if h == nil {
		return nil, false, nil
	}
	in.RunID = rn.st.runID()
	answer, ok, err = h(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("%s: the interrupt handler failed: %w", in.Channel, err)
	}
	if ok {
		rn.st.emit(Event{Type: "answered", At: in.At, Channel: in.Channel, Output: answer})
	}
	return answer, ok, nil
}

// canPause reports whether the stage running now is at a place a run can stop and go on
// from later: a top-level stage of the pipeline the run started with. When it is not (a
// called pipeline, a |* each item, a fan-out branch, a branch arm), it returns an error
// with code, saying what asked (what) and where it is. Approvals use it with
// APPROVAL_NEEDED, yield and listen with NOT_PAUSABLE.
func (rn *run) canPause(code, what string) error {
	if rn.where == "" {
		return nil
	}
	return errorf(code, "%s %s: a run can only pause at a top-level stage of the pipeline it started with, and no interrupt handler answered", what, rn.where)
}

// wait is what a stage that needs an answer does: ask the handler, and without an answer
// pause the run at stage i (or fail with NOT_PAUSABLE where it cannot pause). question is
// what context.meta.paused shows.
func (rn *run) wait(ctx context.Context, i int, in Interrupt, what string, question any) (any, error) {
	var (
		answer any
		ok     bool
		err    error
	)
	if rp := rn.tools.replay; rp != nil {
		// A replay asks no one: the recorded run's answer here, if it was answered.
		answer, ok = rp.answer(in.Channel, rn.place(in.At))
	} else {
		answer, ok, err = rn.ask(ctx, in)
		if ok {
			rn.record(Recorded{Kind: RecordedAnswer, Target: in.Channel, At: in.At, Answer: answer})
		}
	}
	if err != nil || ok {
		return answer, err
	}
	if err := rn.canPause(CodeNotPausable, what); err != nil {
		return nil, err
	}
	return nil, &errPause{stage: i, placed: true, info: PauseInfo{WaitingFor: in.Channel, Question: question}}
}
