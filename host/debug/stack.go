package debug

import (
	"fmt"

	"halolang.dev/halo/host/runtime"
)

// Kinds of frames.
const (
	FramePipeline = "pipeline"
	FrameStage    = "stage"
	FrameArm      = "arm"
	FrameRequest  = "request"
	FrameTool     = "tool"
	FrameAsk      = "ask"
)

// A Frame is one level of where a run is: a pipeline, a stage, a branch arm, an agent call's
// model request or a tool call.
type Frame struct {
	Kind string
	// Name says what it is, for people: "pipeline Tidy", "stage Clerk.work",
	// "Clerk.work request 2", "Files.read".
	Name string
	// At is where it is written (file:line:col): a pipeline's declaration, a stage's
	// operator; a request or a tool call is at its stage.
	At string
	// Pipeline is the pipeline the frame is in.
	Pipeline string
	// own marks the frames of the step's own run of a pipeline, whose context it reads.
	own bool
}

// stack builds where st is, outermost first.
func (s *Session) stack(st *runtime.Step) []Frame {
	if st == nil {
		return nil
	}
	var out []Frame
	pipeline := func(name string) {
		at := ""
		if p, ok := s.index.decls[name]; ok {
			at = p.String()
		}
		out = append(out, Frame{Kind: FramePipeline, Name: "pipeline " + name, At: at, Pipeline: name})
	}
	top := st.Pipeline
	if len(st.Frames) > 0 {
		top = st.Frames[0].Pipeline
	}
	pipeline(top)
	for _, f := range st.Frames {
		out = append(out, Frame{Kind: FrameStage, Name: s.stageFrameName(f.At), At: f.At, Pipeline: f.Pipeline})
		if f.Called != "" {
			pipeline(f.Called)
		} else {
			out = append(out, Frame{Kind: FrameArm, Name: fmt.Sprintf("branch arm %q", f.Arm), At: f.At, Pipeline: f.Pipeline})
		}
	}
	out = append(out, Frame{Kind: FrameStage, Name: s.stageFrameName(st.At), At: st.At, Pipeline: st.Pipeline})
	switch st.Kind {
	case runtime.StepRequest:
		out = append(out, Frame{Kind: FrameRequest, Name: fmt.Sprintf("%s request %d", st.Target, st.Request), At: st.At, Pipeline: st.Pipeline})
	case runtime.StepTool:
		name := st.Target
		if st.Agent != "" {
			name += " (for " + st.Agent + ")"
		}
		out = append(out, Frame{Kind: FrameTool, Name: name, At: st.At, Pipeline: st.Pipeline})
	}
	for i := len(out) - 1; i >= 0; i-- {
		out[i].own = true
		if out[i].Kind == FramePipeline {
			break
		}
	}
	return out
}

// stageFrameName names the stage written at at: "stage Clerk.work".
func (s *Session) stageFrameName(at string) string {
	if t, ok := s.index.targets[at]; ok && t != "" {
		return "stage " + t
	}
	return "stage"
}
