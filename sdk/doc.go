// Package sdk is how a Halo tool provider is written in Go. A provider is a set of typed
// methods; the plugin executable serves it to the Halo host, which starts the plugin in its
// own process with a clean environment and calls it over gRPC (proto/halo/plugin/v1). The
// SDK hides the protocol: an author writes Go structs and functions, and tests them with
// sdk/sdktest.
//
// A complete provider:
//
//	package main
//
//	import (
//		"strings"
//
//		"halolang.dev/halo/sdk"
//	)
//
//	type shoutParams struct {
//		Text  string `json:"text" jsonschema:"description=What to shout"`
//		Times int    `json:"times,omitempty" jsonschema:"description=How many times (default 1),minimum=1,maximum=10"`
//	}
//
//	type shoutResult struct {
//		Shout string `json:"shout"`
//	}
//
//	func shout(c *sdk.Call, p shoutParams) (shoutResult, error) {
//		if strings.TrimSpace(p.Text) == "" {
//			return shoutResult{}, sdk.Fail("nothing to shout; pass some text")
//		}
//		c.Logger().Debug("shouting", "chars", len(p.Text))
//		n := max(p.Times, 1)
//		return shoutResult{Shout: strings.Repeat(strings.ToUpper(p.Text)+"! ", n)}, nil
//	}
//
//	func main() {
//		sdk.Serve(sdk.Provider{
//			Name:        "Shout",
//			Description: "Makes text loud",
//			Methods:     []sdk.Method{sdk.NewMethod("shout", "Upper-cases text and adds an exclamation mark.", sdk.Read, shout)},
//		})
//	}
//
// Declared in a .halo file as `tool Loud : Shout()`, it is called as `Loud.shout(text: "hi")`.
//
// What a method returns decides what the model reads: a value is the result (as JSON); Fail
// is a domain failure the model reads as {"error": ...} and can act on; Retry is a passing
// failure that @retry tries again; any other error is a fatal TOOL_ERROR. A method that
// panics fails its call, not the plugin.
//
// The *Call a method receives is its context (cancelled when the host cancels the call), and
// gives progress reports (Call.Progress) and a logger whose lines reach the host's log
// (Call.Logger). A provider configured per declaration (`Workspace("./notes", write: true)`)
// sets Provider.Configure, and its methods read the result with StateOf.
//
// The SDK is its own Go module (tags sdk/vX.Y.Z; Version is this one's), so a plugin requires
// it and the plugin contract alone, never the host. `halo plugin init NAME` writes a new
// provider project. docs/plugins.md in the Halo repository walks through writing, testing,
// building and shipping a provider, with plugins/worldtime as the example.
package sdk
