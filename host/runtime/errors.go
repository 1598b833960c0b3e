package runtime

import (
	"context"
	"encoding/json"
	"errors"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/agent"
	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
)

// Stable error codes of runs. Users match on them; never change or reuse one.
const (
	// CodeFail: a System.Fail stage failed the run on purpose.
	CodeFail = "PIPELINE_FAILED"
	// CodeInput: the run's inputs do not fit the pipeline's parameters.
	CodeInput = "BAD_INPUT"
	// CodeCondition: a loop condition could not be compiled or evaluated.
	CodeCondition = check.CodeBadCondition
	// CodeMock: a mocks file is malformed, or a scripted list of answers ran out.
	CodeMock = "MOCK"
	// CodeApprovalNeeded: a call needs a person's approval and there is no way to ask one.
	CodeApprovalNeeded = agent.CodeApprovalNeeded
	// CodeDeclined: a person (or an approval mock) declined a call the pipeline makes for an
	// agent (tool: T). A declined call the agent's model chose goes back to the model instead.
	CodeDeclined = "APPROVAL_DECLINED"
	// CodeRun: a run record cannot be found, read or resumed.
	CodeRun = "RUN_RECORD"
	// CodeNotPausable: a yield where a run cannot stop (inside a called pipeline, a |* each,
	// a fan-out or a branch arm) and no interrupt handler answered.
	CodeNotPausable = "NOT_PAUSABLE"
	// CodeType: a stage got a value of the wrong kind (|* each a value that is not a list).
	CodeType = "TYPE"
	// CodeTimeout is the code of a stage that ran out of time (@timeout); the same string as
	// tool and model timeouts.
	CodeTimeout = tool.CodeTimeout
	// CodeCancelled: the run was cancelled (Ctrl-C, a client that went away).
	CodeCancelled = "CANCELLED"
	// CodeInternal: anything else that went wrong in the host.
	CodeInternal = "INTERNAL"
)

// An Error is a run failure with a stable code: the host's one coded-error type.
type Error = errcode.Error

func errorf(code, format string, args ...any) *Error {
	return errcode.New(code, format, args...)
}

// An ErrorInfo is a failure as a run result and a run record show it.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// At is where the failing stage is written (file:line:col).
	At string `json:"at,omitempty"`
	// Detail is a tool's domain failure as the tool gave it (sdk.FailWith's object, an MCP
	// error result's content): what a model would read.
	Detail json.RawMessage `json:"detail,omitempty"`
}

func infoOf(err error, at string) *ErrorInfo {
	code := errcode.Code(err)
	switch {
	case code == "" && errors.Is(err, context.Canceled):
		code = CodeCancelled
	case code == "":
		code = CodeInternal
	}
	msg := err.Error()
	info := &ErrorInfo{Code: code, Message: msg, At: at}
	var te *tool.Error
	if errors.As(err, &te) && len(te.Detail) > 0 {
		info.Detail = te.Detail
	}
	return info
}

// retryable reports whether @retry may run a stage again after err: tool and model failures
// marked retryable (HTTP 408/429/5xx, network errors) and timeouts (a stage's @timeout among
// them); never a policy violation or a cancelled run.
func retryable(err error) bool {
	var v *policy.Violation
	if errors.As(err, &v) || errors.Is(err, context.Canceled) {
		return false
	}
	if tool.IsRetryable(err) || model.IsRetryable(err) {
		return true
	}
	return errcode.Code(err) == CodeTimeout
}
