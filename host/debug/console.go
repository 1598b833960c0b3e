package debug

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"halolang.dev/halo/host/runtime"
)

// The prompts of the console.
const (
	// Prompt asks for a command.
	Prompt = "(halo) "
	// ApprovalPrompt asks about a call waiting for approval, as halo run does.
	ApprovalPrompt = "Allow? [y/N, or say why not] "
	// AnswerPrompt asks for the answer to a |! yield or a ~> listen's payload.
	AnswerPrompt = "answer: "
)

// A Console is the terminal's front end of a Session: before each stop it shows where the
// run is, then reads commands (Help lists them) until one lets the run go on. Every line it
// writes goes to Out, which the caller makes safe for a terminal (the values it shows come
// from models and tools).
type Console struct {
	Session *Session
	Out     io.Writer
	// ReadLine reads one line the person typed after prompt. An error ends the person's
	// part: the run is stopped with the error's message as the reason ("the terminal was
	// closed", "the commands on standard input ended").
	ReadLine func(prompt string) (string, error)

	// last is the command an empty line repeats (n, s, o or c).
	last string
}

// Help is the console's list of commands.
const Help = `commands:
  n, next           run to the next stage (or, inside an agent call, its next model request or tool call)
  s, step           step into: a called pipeline's or a branch arm's stages, an agent call's requests and tool calls
  o, out            run until the step after the agent call or the called pipeline this step is in
  c, continue       run to the next breakpoint
  b LINE            break before the stage on LINE (FILE:LINE for another file); a line without a stage
                    moves to the next stage
  b Tool.method     break before every call of a method (Tool: any of its methods; Agent.task: each model request)
  b violation       break at every policy violation
  b                 list the breakpoints;  d N  deletes breakpoint N
  p EXPR            evaluate EXPR over context, as conditions are written (context.data.report, inputs, meta)
  set NAME VALUE    change context.data.NAME (a path like report.score too) before the stage runs
  skip VALUE        at a tool call: answer it with VALUE instead of running it, and go on
  r, record         show the record of the run so far
  bt, where         show where the run is;  l  shows the stop again
  q, quit           stop the run (its record says it was stopped)
VALUE is JSON when it parses as JSON, else text. An empty line repeats n, s, o or c.
At a question of the run (a |! yield, an approval, a ~> listen) the line typed is the answer.`

// Run shows each stop and reads commands until the run ends, and returns how it ended.
func (c *Console) Run() *End {
	var end *End
	for ev := range c.Session.Events() {
		if ev.End != nil {
			end = ev.End
			continue
		}
		c.stopped(ev.Stop)
	}
	c.Session.Wait()
	return end
}

// stopped shows stop and reads commands until one lets the run go on.
func (c *Console) stopped(stop *Stop) {
	c.show(stop)
	for {
		if stop.Reason == ReasonAsk {
			prompt := AnswerPrompt
			if stop.Ask.Channel == runtime.ChannelApproval {
				prompt = ApprovalPrompt
			}
			line, err := c.ReadLine(prompt)
			if err != nil {
				c.leave(err)
				return
			}
			var answer any = strings.TrimSpace(line)
			if stop.Ask.Channel != runtime.ChannelApproval {
				answer = ParseValue(line)
			}
			if err := c.Session.Answer(answer); err != nil {
				fmt.Fprintf(c.Out, "%v\n", err)
			}
			return
		}
		line, err := c.ReadLine(Prompt)
		if err != nil {
			c.leave(err)
			return
		}
		if c.command(stop, line) {
			return
		}
	}
}

// leave stops the run: the person is gone.
func (c *Console) leave(err error) {
	why := err.Error()
	if errors.Is(err, io.EOF) {
		why = "the input ended"
	}
	fmt.Fprintf(c.Out, "\nstopping the run: %s\n", why)
	c.Session.Stop(why)
}

// command runs one command line at stop; true when the run goes on.
func (c *Console) command(stop *Stop, line string) bool {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	if name == "" {
		if c.last == "" {
			return false
		}
		name = c.last
	}
	resume := func(f func() error, cmd string) bool {
		if err := f(); err != nil {
			fmt.Fprintf(c.Out, "%v\n", err)
			return false
		}
		c.last = cmd
		return true
	}
	st := stop.Step
	switch name {
	case "n", "next":
		return resume(c.Session.Next, "n")
	case "s", "step":
		return resume(c.Session.StepIn, "s")
	case "o", "out":
		return resume(c.Session.StepOut, "o")
	case "c", "continue":
		return resume(c.Session.Continue, "c")
	case "b", "break":
		c.breakpoint(arg)
	case "d", "delete":
		id, err := strconv.Atoi(arg)
		switch {
		case err != nil:
			fmt.Fprintf(c.Out, "d N: N is a breakpoint's number (b lists them)\n")
		case !c.Session.Delete(id):
			fmt.Fprintf(c.Out, "there is no breakpoint %d (b lists them)\n", id)
		default:
			fmt.Fprintf(c.Out, "deleted breakpoint %d\n", id)
		}
	case "p", "print":
		if arg == "" {
			fmt.Fprintf(c.Out, "p EXPR: give an expression, as in p context.data\n")
			break
		}
		v, err := st.Eval(arg)
		if err != nil {
			fmt.Fprintf(c.Out, "cannot evaluate it: %v\n", err)
			break
		}
		fmt.Fprintf(c.Out, "%s\n", pretty(v, maxPrinted))
	case "set":
		path, value, ok := strings.Cut(arg, " ")
		if !ok || strings.TrimSpace(value) == "" {
			fmt.Fprintf(c.Out, "set NAME VALUE: give a name of context.data and its new value, as in set limit 5\n")
			break
		}
		v := ParseValue(value)
		if err := st.Set(path, v); err != nil {
			fmt.Fprintf(c.Out, "cannot set it: %v\n", err)
			break
		}
		fmt.Fprintf(c.Out, "context.data.%s = %s (set by you; the record says so)\n", strings.TrimPrefix(path, "context.data."), compact(v, maxSummary))
	case "skip":
		if arg == "" {
			fmt.Fprintf(c.Out, "skip VALUE: give the value the call returns instead (JSON, or text)\n")
			break
		}
		v := ParseValue(arg)
		if err := st.Skip(v); err != nil {
			fmt.Fprintf(c.Out, "cannot skip it: %v\n", err)
			break
		}
		fmt.Fprintf(c.Out, "%s answered with %s instead of running (set by you; the record says so)\n", st.Target, compact(v, maxSummary))
		return resume(c.Session.Next, "n")
	case "r", "record":
		c.record(st)
	case "bt", "where", "stack":
		c.where(stop)
	case "l", "list":
		c.show(stop)
	case "q", "quit":
		c.Session.Stop("q")
		return true
	case "h", "help", "?":
		fmt.Fprintf(c.Out, "%s\n", Help)
	default:
		fmt.Fprintf(c.Out, "unknown command %q; type h for the commands\n", name)
	}
	return false
}

// breakpoint runs b ARG.
func (c *Console) breakpoint(arg string) {
	s := c.Session
	var (
		bp  *Breakpoint
		err error
	)
	switch {
	case arg == "":
		bps := s.Breakpoints()
		if len(bps) == 0 {
			fmt.Fprintf(c.Out, "no breakpoints\n")
		}
		for _, bp := range bps {
			fmt.Fprintf(c.Out, "%s\n", bp.Describe())
		}
		return
	case arg == "violation":
		bp = s.BreakViolation()
	default:
		file, lineText := "", arg
		if i := strings.LastIndexByte(arg, ':'); i >= 0 {
			file, lineText = arg[:i], arg[i+1:]
		}
		if n, aerr := strconv.Atoi(lineText); aerr == nil {
			bp, err = s.BreakLine(file, n)
		} else if file != "" {
			err = fmt.Errorf("b FILE:LINE: %q is not a line number", lineText)
		} else {
			bp, err = s.BreakCall(arg)
		}
	}
	if err != nil {
		fmt.Fprintf(c.Out, "no breakpoint: %v\n", err)
		return
	}
	fmt.Fprintf(c.Out, "%s\n", bp.Describe())
}

// show says where the run is stopped and what it holds.
func (c *Console) show(stop *Stop) {
	w := c.Out
	st := stop.Step
	if stop.Reason == ReasonAsk {
		in := stop.Ask
		switch in.Channel {
		case runtime.ChannelApproval:
			fmt.Fprintf(w, "\nthe run asks at %s: %s\n", in.At, in.Message)
		case runtime.ChannelYield:
			fmt.Fprintf(w, "\nthe run asks at %s (|! yield): %s\n", in.At, in.Message)
		default:
			fmt.Fprintf(w, "\nthe run waits at %s for a signal on channel %q: type its payload (JSON or text)\n", in.At, in.Channel)
		}
		return
	}
	why := ""
	switch stop.Reason {
	case ReasonBreakpoint:
		ids := make([]string, len(stop.Breakpoints))
		for i, id := range stop.Breakpoints {
			ids[i] = strconv.Itoa(id)
		}
		why = " (breakpoint " + strings.Join(ids, ", ") + ")"
	case ReasonPause:
		why = " (paused)"
	}
	fmt.Fprintf(w, "\n")
	switch st.Kind {
	case runtime.StepStage:
		what := fmt.Sprintf("stage %d of pipeline %s", st.Index+1, st.Pipeline)
		if st.Index < 0 {
			what = "the start value of pipeline " + st.Pipeline
		}
		fmt.Fprintf(w, "stopped before %s%s at %s%s\n", what, nesting(st), st.At, why)
		c.source(st.At)
		fmt.Fprintf(w, "  value: %s\n", compact(st.Value, maxSummary))
		fmt.Fprintf(w, "  context.data: %s\n", compact(st.Context()["data"], maxSummary))
	case runtime.StepRequest:
		fmt.Fprintf(w, "stopped before model request %d of %s (%s)%s at %s%s\n", st.Request, st.Target, st.Model, nesting(st), st.At, why)
		c.source(st.At)
		if len(st.Offered) > 0 {
			fmt.Fprintf(w, "  offered: %s\n", strings.Join(st.Offered, ", "))
		}
		fmt.Fprintf(w, "  last message: %s\n", lastMessage(st.Messages))
	case runtime.StepTool:
		by := ""
		if st.Agent != "" {
			by = ", asked for by " + st.Agent + "'s model"
		}
		fmt.Fprintf(w, "stopped before the call of %s%s%s at %s%s\n", st.Target, by, nesting(st), st.At, why)
		c.source(st.At)
		fmt.Fprintf(w, "  arguments: %s\n", compact(st.Args, maxSummary))
		fmt.Fprintf(w, "  policies: %s\n", decisionText(st.Decision))
		fmt.Fprintf(w, "  (skip VALUE answers it instead of running it)\n")
	case runtime.StepViolation:
		v := st.Violation
		on := ""
		if v.Target != "" {
			on = " on " + v.Target
		}
		fmt.Fprintf(w, "stopped at a policy violation at %s%s: policy %s (%s, phase %s)%s: %s\n", st.At, why, v.Policy, v.Rule, v.Phase, on, v.Message)
		c.source(st.At)
	}
}

// nesting says where a step's pipeline is nested: " in pipeline Inner, called at f:4:6".
func nesting(st *runtime.Step) string {
	if len(st.Frames) == 0 {
		return ""
	}
	f := st.Frames[len(st.Frames)-1]
	if f.Called != "" {
		return fmt.Sprintf(" (pipeline %s, called at %s)", f.Called, f.At)
	}
	return fmt.Sprintf(" (branch arm %q of the branch at %s)", f.Arm, f.At)
}

// source shows the lines of the stage written at at.
func (c *Console) source(at string) {
	first, lines := c.Session.index.source(at)
	for i, l := range lines {
		fmt.Fprintf(c.Out, "  %4d | %s\n", first+i, l)
	}
}

// where shows the stack, outermost first.
func (c *Console) where(stop *Stop) {
	for i, f := range stop.Stack {
		fmt.Fprintf(c.Out, "  %s%s at %s\n", strings.Repeat("  ", i), f.Name, f.At)
	}
}

// record shows the run's events so far and context.meta.
func (c *Console) record(st *runtime.Step) {
	evs := st.Events()
	fmt.Fprintf(c.Out, "run %s (pipeline %s), so far: %d events\n", st.RunID, st.Pipeline, len(evs))
	for i, e := range evs {
		fmt.Fprintf(c.Out, "  %3d  %s\n", i+1, eventLine(e))
	}
	if meta, ok := st.Context()["meta"].(map[string]any); ok {
		calls, _ := meta["calls"].([]any)
		viol, _ := meta["violations"].([]any)
		cost, _ := meta["cost"].(float64)
		fmt.Fprintf(c.Out, "  context.meta: cost $%.6f, %d calls, %d violations\n", cost, len(calls), len(viol))
	}
}

// eventLine is one event on one line.
func eventLine(e runtime.Event) string {
	parts := []string{fmt.Sprintf("%-10s", e.Type)}
	add := func(s string) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	add(e.At)
	add(e.Target)
	if e.Step > 0 {
		add(fmt.Sprintf("request %d", e.Step))
	}
	if len(e.ToolCalls) > 0 {
		add("asked for " + strings.Join(e.ToolCalls, ", "))
	} else if e.Answer != "" {
		add("answered " + compact(e.Answer, 80))
	}
	if len(e.Args) > 0 {
		add(compact(e.Args, 120))
	}
	add(e.Decision)
	if e.Type == "tool" || e.Type == "set" {
		if e.Output != nil {
			add("-> " + compact(e.Output, 120))
		}
	}
	if e.Policy != "" {
		add(fmt.Sprintf("policy %s (%s): %s", e.Policy, e.Rule, e.Message))
	}
	add(string(e.Status))
	if e.Error != nil {
		add(fmt.Sprintf("%s [%s]", e.Error.Message, e.Error.Code))
	}
	if e.SetBy != "" {
		add("(set by a " + e.SetBy + ")")
	}
	return strings.Join(parts, "  ")
}
