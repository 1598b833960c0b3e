package runtime_test

import (
	"context"
	"fmt"

	"halolang.dev/halo/host/runtime"
)

// A user's own test: load a source, mock the agent, run, and read the output and meta.
func ExampleLoad() {
	const source = `
policy Shape : Require(JSON)

agent Refunder [openai/gpt-4o-mini]
  requires Shape

pipeline Decide(request: String) -> JSON:
  request |> Refunder.decide("Decide the refund as JSON.") @correct(1)
`
	rt, err := runtime.Load("refunds.halo", source, runtime.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The first answer is prose, which Require(JSON) rejects; @correct(1) asks again.
	rt.Mock("Refunder.decide", []any{"About 30 dollars.", `{"amount": 30}`})
	res, err := rt.Run(context.Background(), "Decide", map[string]any{"request": "late delivery"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Status, res.Output)
	fmt.Println(len(res.Meta.Calls), "model calls;", res.Meta.Violations[0].Rule, "corrected")
	// Output:
	// completed map[amount:30]
	// 2 model calls; Require corrected
}
