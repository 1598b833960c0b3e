package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/halo-lang/halo/host/lang"
	"github.com/halo-lang/halo/host/model"
	"github.com/halo-lang/halo/host/policy"
	"github.com/halo-lang/halo/host/tool"
)

// A run is one execution of one pipeline (a called pipeline gets its own run that shares
// the caller's meta, events, tools and budget).
type run struct {
	r      *Runtime
	pd     *lang.PipelineDecl
	inputs map[string]any
	st     *state
	tools  *toolSet
	budget *policy.Budget
	nested bool
	rec    *Record

	// loops counts each loop stage's passes; stageIn keeps each stage's flowing value so a
	// loop can go back; feedback is the note a loop leaves for the agent stage it goes back
	// to. Only the pipeline's own goroutine touches them.
	loops    map[int]int
	stageIn  map[int]any
	stageOut map[int]any
	feedback map[int]string
}

func (r *Runtime) newRun(pd *lang.PipelineDecl, inputs map[string]any) *run {
	// context.data starts with the inputs, so "context.data.request.limit" reads an input
	// the way it reads an `as` name.
	data := make(map[string]any, len(inputs))
	for k, v := range inputs {
		data[k] = v
	}
	st := &state{
		meta: Meta{RunID: r.cfg.NewID(), Calls: []CallInfo{}, Violations: []ViolationInfo{}},
		data: data, onEv: r.cfg.OnEvent, now: r.cfg.Now,
	}
	return &run{
		r: r, pd: pd, inputs: inputs, st: st,
		tools:  newToolSet(r, inputs),
		budget: policy.NewBudget(),
		loops:  map[int]int{}, stageIn: map[int]any{}, stageOut: map[int]any{}, feedback: map[int]string{},
	}
}

// sub makes the run of a pipeline called from this one.
func (rn *run) sub(pd *lang.PipelineDecl, inputs map[string]any) *run {
	data := make(map[string]any, len(inputs))
	for k, v := range inputs {
		data[k] = v
	}
	st := &state{data: data, now: rn.r.cfg.Now, root: rn.st.top()}
	return &run{
		r: rn.r, pd: pd, inputs: inputs, st: st, tools: rn.tools, budget: rn.budget, nested: true,
		loops: map[int]int{}, stageIn: map[int]any{}, stageOut: map[int]any{}, feedback: map[int]string{},
	}
}

func (rn *run) close() { rn.tools.close() }

func (rn *run) scope() *scope {
	return &scope{inputs: rn.inputs, st: rn.st, env: rn.r.cfg.Env}
}

// errPause is how a yield stops the stages; exec turns it into a paused result.
type errPause struct {
	stage    int
	question any
}

func (e *errPause) Error() string { return "paused" }

// exec runs the stages from index start. When resuming, payload is the value of the yield
// stage at start.
func (rn *run) exec(ctx context.Context, start int, payload any, resuming bool) *Result {
	out, err := rn.stages(ctx, start, payload, resuming)
	res := &Result{RunID: rn.st.meta.RunID}
	var pause *errPause
	switch {
	case errors.As(err, &pause):
		res.Status = Paused
		rn.st.mu.Lock()
		rn.st.meta.Paused = &PauseInfo{WaitingFor: "yield", Question: pause.question}
		rn.st.mu.Unlock()
		rn.rec.Resume = &ResumePoint{Stage: pause.stage, Loops: rn.loops, Inputs: rn.stageIn, Outputs: rn.stageOut}
		rn.st.emit(Event{Type: "paused", At: rn.pd.Stages[pause.stage].Pos.String(), Output: pause.question})
	case err != nil:
		res.Status = Failed
		var se *stageError
		at := ""
		if errors.As(err, &se) {
			at, err = se.at, se.err
		}
		res.Error = infoOf(err, at)
		rn.rec.Resume = nil
	default:
		res.Status = Completed
		res.Output = out
		rn.rec.Resume = nil
	}
	rn.st.emit(Event{Type: "run", Status: res.Status, Error: res.Error})
	rn.st.mu.Lock()
	res.Meta = rn.st.meta
	res.Data = rn.st.data
	rn.st.mu.Unlock()
	return res
}

// save writes the run record, when the runtime has a store.
func (rn *run) save(res *Result) error {
	if rn.r.cfg.Store == nil {
		return nil
	}
	rec := rn.rec
	rec.Status, rec.Output, rec.Error, rec.Meta, rec.Data = res.Status, res.Output, res.Error, res.Meta, res.Data
	rn.st.mu.Lock()
	rec.Events = append([]Event(nil), rn.st.events...)
	rn.st.mu.Unlock()
	rec.Mocks = rn.r.cfg.Mocks.cursors()
	rec.Updated = rn.r.cfg.Now().UTC()
	return rn.r.cfg.Store.Save(rec)
}

// A stageError carries where the failing stage is written.
type stageError struct {
	at  string
	err error
}

func (e *stageError) Error() string { return e.at + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

func (rn *run) stages(ctx context.Context, start int, payload any, resuming bool) (any, error) {
	stages := rn.pd.Stages
	var value any
	i := start
	if resuming {
		st := stages[start]
		value = payload
		if st.As != nil {
			rn.st.set(st.As.Name, value)
		}
		rn.stageOut[start] = value
		rn.stageDone(st)
		i = start + 1
	} else {
		v, err := rn.startValue(ctx)
		if err != nil {
			return nil, &stageError{at: rn.pd.Pos.String(), err: err}
		}
		value = v
	}
	for i < len(stages) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st := stages[i]
		if st.Op == lang.OpFallback {
			// Reached in order: the stage before did not fail, so its value passes through.
			i++
			continue
		}
		rn.stageIn[i] = value
		out, jump, err := rn.stage(ctx, i, st, value)
		if err != nil {
			var pause *errPause
			if errors.As(err, &pause) {
				return nil, err
			}
			if i+1 < len(stages) && stages[i+1].Op == lang.OpFallback && ctx.Err() == nil {
				fb := stages[i+1]
				rn.st.set("error", map[string]any{"code": codeOf(err), "message": err.Error(), "at": st.Pos.String()})
				rn.stageIn[i+1] = value
				out, _, err = rn.stage(ctx, i+1, fb, value)
				if err != nil {
					return nil, &stageError{at: fb.Pos.String(), err: err}
				}
				value = out
				if fb.As != nil {
					rn.st.set(fb.As.Name, out)
				}
				rn.stageDone(fb)
				i += 2
				continue
			}
			return nil, &stageError{at: st.Pos.String(), err: err}
		}
		if jump >= 0 {
			i = jump
			value = rn.stageIn[jump]
			continue
		}
		value = out
		rn.stageOut[i] = out
		if st.As != nil {
			rn.st.set(st.As.Name, out)
		}
		rn.stageDone(st)
		i++
	}
	return value, nil
}

// stageDone emits the "stage" event of a stage of the run's own pipeline that finished (a
// called pipeline's stages emit none).
func (rn *run) stageDone(st *lang.Stage) {
	if !rn.nested {
		rn.st.emit(Event{Type: "stage", At: st.Pos.String(), Target: stageTarget(st)})
	}
}

// stageTarget names what a stage calls, for its stage event: "Agent.task", "Tool.method",
// a pipeline's name, or the fan-out's targets joined with ", ".
func stageTarget(st *lang.Stage) string {
	if st.Call != nil {
		return st.Call.Target()
	}
	names := make([]string, len(st.Calls))
	for i, c := range st.Calls {
		names[i] = c.Target()
	}
	return strings.Join(names, ", ")
}

func codeOf(err error) string {
	if c := tool.Code(err); c != "" {
		return c
	}
	return CodeInternal
}

func (rn *run) startValue(ctx context.Context) (any, error) {
	switch x := rn.pd.Start.(type) {
	case nil:
		return nil, nil
	case *lang.Call:
		return rn.call(ctx, x, nil, callOpts{})
	default:
		return rn.scope().eval(x)
	}
}

// stage runs stage i on value. jump, when not -1, is the stage a loop goes back to.
func (rn *run) stage(ctx context.Context, i int, st *lang.Stage, value any) (out any, jump int, err error) {
	switch st.Op {
	case lang.OpLoop:
		j, err := rn.loop(i, st, value)
		return value, j, err
	case lang.OpYield:
		if rn.nested {
			return nil, -1, errorf(CodeNotPausable, "yield in pipeline %s, called from another pipeline: only the pipeline a run starts with can pause", rn.pd.Name.Name)
		}
		q, err := rn.scope().eval(st.Call.Args[0].Value)
		if err != nil {
			return nil, -1, err
		}
		return nil, -1, &errPause{stage: i, question: q}
	case lang.OpFanOut:
		out, err := rn.fanOut(ctx, st, value)
		return out, -1, err
	default:
		opts := callOpts{feedback: rn.feedback[i], at: st.Pos.String()}
		delete(rn.feedback, i)
		if d := st.Directive("correct"); d != nil {
			opts.correct = directiveInt(d)
		}
		out, err := rn.directed(ctx, st, func(ctx context.Context, attempt int) (any, error) {
			o := opts
			o.attempt = attempt
			return rn.call(ctx, st.Call, value, o)
		})
		return out, -1, err
	}
}

func directiveInt(d *lang.Directive) int {
	if len(d.Args) == 1 {
		if n, ok := d.Args[0].Value.(*lang.NumberLit); ok {
			return int(n.Value)
		}
	}
	return 0
}

// directed applies a stage's @retry and @timeout to f.
func (rn *run) directed(ctx context.Context, st *lang.Stage, f func(ctx context.Context, attempt int) (any, error)) (any, error) {
	retries := 0
	if d := st.Directive("retry"); d != nil {
		retries = directiveInt(d)
	}
	var timeout time.Duration
	if d := st.Directive("timeout"); d != nil && len(d.Args) == 1 {
		if n, ok := d.Args[0].Value.(*lang.NumberLit); ok {
			timeout = time.Duration(n.Value * float64(time.Millisecond))
		}
	}
	for attempt := 1; ; attempt++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, timeout)
		}
		out, err := f(actx, attempt)
		timedOut := timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err == nil {
			return out, nil
		}
		if timedOut {
			err = &Error{Code: CodeTimeout, Retryable: true, Err: err,
				Message: fmt.Sprintf("the stage took longer than @timeout(%d)", timeout.Milliseconds())}
		}
		if attempt > retries || !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		wait := rn.r.cfg.RetryBackoff << (attempt - 1)
		if ra := retryAfter(err); ra > wait {
			wait = ra
		}
		if wait > 30*time.Second {
			wait = 30 * time.Second
		}
		rn.r.cfg.Logger.Debug("retrying stage", "at", st.Pos.String(), "attempt", attempt+1, "wait", wait, "error", err)
		if err := rn.r.cfg.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func retryAfter(err error) time.Duration {
	var te *tool.Error
	if errors.As(err, &te) {
		return te.RetryAfter
	}
	var me *model.Error
	if errors.As(err, &me) {
		return me.RetryAfter
	}
	return 0
}

// loop decides a |<> loop(Agent, "condition", max: n) stage: while the condition holds and
// passes are left, the run goes back to the last stage before it that calls Agent, with a
// note for the agent saying which check failed and what it answered before.
func (rn *run) loop(i int, st *lang.Stage, value any) (int, error) {
	pos := st.Call.Positional()
	agent := pos[0].Value.(*lang.Ident).Name
	cond := pos[1].Value.(*lang.StringLit).Value
	max := 3
	if a := st.Call.Named("max"); a != nil {
		if n, ok := a.Value.(*lang.NumberLit); ok {
			max = int(n.Value)
		}
	}
	holds, err := rn.r.conds.eval(cond, rn.scope())
	if err != nil {
		return -1, err
	}
	if !holds {
		return -1, nil
	}
	if rn.loops[i] >= max {
		rn.st.emit(Event{Type: "loop", At: st.Pos.String(), Agent: agent, Attempt: rn.loops[i] + 1,
			Message: fmt.Sprintf("%s still holds after %d passes; going on", cond, max)})
		return -1, nil
	}
	target := -1
	for j := i - 1; j >= 0; j-- {
		if callsAgent(rn.pd.Stages[j], agent) {
			target = j
			break
		}
	}
	if target < 0 {
		return -1, errorf(CodeCondition, "loop: no stage before it calls %s", agent)
	}
	rn.loops[i]++
	rn.feedback[target] = fmt.Sprintf("This is pass %d. After your previous answer, the check %q still holds, so the work is not done.\n\nYour previous answer:\n%s\n\nWhat the pipeline saw last:\n%s",
		rn.loops[i]+1, cond, text(rn.stageOut[target]), text(value))
	rn.st.emit(Event{Type: "loop", At: st.Pos.String(), Agent: agent, Attempt: rn.loops[i] + 1, Message: cond})
	return target, nil
}

func callsAgent(st *lang.Stage, agent string) bool {
	if st.Call != nil && st.Call.Recv != nil && st.Call.Recv.Name == agent {
		return true
	}
	for _, c := range st.Calls {
		if c.Recv != nil && c.Recv.Name == agent {
			return true
		}
	}
	return false
}

// fanOut runs a |* { ... } stage's calls concurrently on value and gathers their outputs
// in order. The first failure cancels the others; fanOut returns after every branch has.
func (rn *run) fanOut(ctx context.Context, st *lang.Stage, value any) (any, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs := make([]any, len(st.Calls))
	errs := make([]error, len(st.Calls))
	done := make(chan int, len(st.Calls))
	for k, c := range st.Calls {
		go func() {
			defer func() { done <- k }()
			opts := callOpts{at: c.Pos.String()}
			if d := st.Directive("correct"); d != nil {
				opts.correct = directiveInt(d)
			}
			outs[k], errs[k] = rn.directed(ctx, st, func(ctx context.Context, attempt int) (any, error) {
				o := opts
				o.attempt = attempt
				return rn.call(ctx, c, value, o)
			})
		}()
	}
	var first error
	for range st.Calls {
		k := <-done
		if errs[k] != nil && first == nil {
			first = fmt.Errorf("%s: %w", st.Calls[k].Target(), errs[k])
			cancel()
		}
	}
	if first != nil {
		return nil, first
	}
	return outs, nil
}
