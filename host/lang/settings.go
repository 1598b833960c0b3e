package lang

// CallSettings are an agent call's model and tool-loop settings: the agent's brackets,
// overridden by the call's named options. Zero means not set (the runtime's default); a
// setting written as anything but a number literal is not set.
type CallSettings struct {
	// Temp is temp: (or temperature:); nil when not set.
	Temp *float64
	// MaxTokens, MaxSteps and ResultChars are max_tokens:, max_steps: and tool_result_chars:.
	MaxTokens, MaxSteps, ResultChars int
	// Tools are the names of the tools offered (tools: auto, none, or [A, B]): nil for none.
	Tools []string
	// Auto says Tools came from tools: auto: every equipped tool, which the runtime narrows
	// to those that are not stores (File, VectorStore), since stores add to the prompt
	// instead.
	Auto bool
}

// SettingsOf reads the settings of a call c of agent a. The runtime runs the call with them,
// and halo plan works out its worst case from them, so both read them here.
func (a *AgentDecl) SettingsOf(c *Call) CallSettings {
	var s CallSettings
	apply := func(arg *Arg) {
		n, isNum := arg.Value.(*NumberLit)
		switch arg.Name.Name {
		case "temp", "temperature":
			if isNum {
				v := n.Value
				s.Temp = &v
			} else {
				s.Temp = nil
			}
		case "max_tokens":
			if isNum {
				s.MaxTokens = int(n.Value)
			}
		case "max_steps":
			if isNum {
				s.MaxSteps = int(n.Value)
			}
		case "tool_result_chars":
			if isNum {
				s.ResultChars = int(n.Value)
			}
		case "tools":
			s.Tools = a.toolNames(arg)
			id, isIdent := arg.Value.(*Ident)
			s.Auto = isIdent && id.Name == "auto"
		}
	}
	for _, arg := range a.Settings {
		apply(arg)
	}
	if c != nil {
		for _, arg := range c.Args {
			if arg.Name != nil {
				apply(arg)
			}
		}
	}
	return s
}

// toolNames reads tools: auto (every equipped tool), none, or [A, B].
func (a *AgentDecl) toolNames(arg *Arg) []string {
	switch x := arg.Value.(type) {
	case *Ident:
		if x.Name == "auto" {
			var out []string
			for _, id := range a.Equips {
				out = append(out, id.Name)
			}
			return out
		}
	case *ListLit:
		var out []string
		for _, e := range x.Elems {
			if id, ok := e.(*Ident); ok {
				out = append(out, id.Name)
			}
		}
		return out
	}
	return nil
}
