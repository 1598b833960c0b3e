// Command echo is a plugin for sdktest's own tests: one provider, Echo, whose say method logs
// a line at each level and returns what it was given.
package main

import "halolang.dev/halo/sdk"

type params struct {
	Text string `json:"text"`
}

func say(c *sdk.Call, p params) (params, error) {
	c.Logger().Debug("echo debug line")
	c.Logger().Warn("echo warn line")
	return p, nil
}

func main() {
	sdk.Serve(sdk.Provider{Name: "Echo", Description: "Echoes", Methods: []sdk.Method{
		sdk.NewMethod("say", "Returns its text.", sdk.Read, say),
	}})
}
