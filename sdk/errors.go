package sdk

import (
	"encoding/json"
	"fmt"
	"time"

	"halolang.dev/halo/sdk/internal/wire"
)

// Fail returns a domain failure: the method ran and the answer is "no" (no such file, no
// matching zone). The model reads {"error": message} as the tool's result and can change
// course in one turn, so say what to do instead: "no zone Europe/Pari; call zones to search".
func Fail(format string, args ...any) error {
	return &wire.Failure{Message: fmt.Sprintf(format, args...)}
}

// FailWith returns a domain failure whose result is detail (a JSON object with an "error"
// field, and anything else that helps: {"error": "...", "candidates": [...]}).
func FailWith(message string, detail any) error {
	b, err := json.Marshal(detail)
	if err != nil {
		return &wire.Failure{Message: message}
	}
	return &wire.Failure{Message: message, Detail: b}
}

// Retry returns a passing failure, such as a rate limit: the host's @retry waits after (0 lets
// the host choose) and calls again.
func Retry(after time.Duration, format string, args ...any) error {
	return &wire.RetryError{Message: fmt.Sprintf(format, args...), After: after}
}

// ArgumentError reports arguments that do not fit the method beyond what the schema says (a
// start after an end, say). The host reports it as TOOL_ARGUMENT.
func ArgumentError(format string, args ...any) error {
	return &wire.CodedError{Code: wire.CodeToolArgument, Message: fmt.Sprintf(format, args...)}
}
