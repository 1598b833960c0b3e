package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"halolang.dev/halo/errcode"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/policy"
	"halolang.dev/halo/host/tool"
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
	shares *shares
	rec    *Record
	// mock is the run's own copy of the runtime's mocks (Mocks.fork): its scripts are its
	// own. Called pipelines and nested stages share it.
	mock *Mocks
	// where says why a stage of this run cannot pause ("in pipeline X, called from
	// another pipeline"); empty at the top level of the pipeline the run started with.
	// A yield, listen or approval there needs an interrupt handler (see canPause).
	where string
	// resume is set while a run that paused for approval is continued (see approvalResume).
	resume *approvalResume
	// list is the stages this run goes through: the pipeline's, or a branch arm's.
	list []*lang.Stage
	// dbg is set while Config.Hooks are told of the run's steps, or a replay sets values a
	// person set (see hooks.go); frames are where this run is nested then.
	dbg    *debugRun
	frames []Frame

	// loops counts each loop stage's passes; stageIn keeps each stage's flowing value so a
	// loop can go back; feedback is the note a loop leaves for the agent stage it goes back
	// to. Indices are into list. Only the goroutine running list touches them. loops and
	// feedback are made by the first loop that goes back (most runs have none; a nil map
	// and an empty one are saved alike).
	loops    map[int]int
	stageIn  stageValues
	stageOut stageValues
	feedback map[int]string
}

// runBlock is what a run is made of, made in one allocation, not six: a one-stage run under
// `halo serve` /mcp and `halo mcp` is a few microseconds, and each of these is made once a run
// and lives as long as it does.
type runBlock struct {
	run    run
	st     state
	tools  toolSet
	rec    recorder
	shares shares
	mocks  Mocks
}

func (r *Runtime) newRun(pd *lang.PipelineDecl, inputs map[string]any) *run {
	// context.data starts with the inputs, so "context.data.request.limit" reads an input
	// the way it reads an `as` name.
	data := make(map[string]any, len(inputs))
	for k, v := range inputs {
		data[k] = v
	}
	b := &runBlock{}
	b.st = state{
		meta: Meta{RunID: r.cfg.NewID(), Calls: []CallInfo{}, Violations: []ViolationInfo{}},
		data: data, onEv: r.cfg.OnEvent, now: r.cfg.Now,
		// Room for the usual events (a call and a stage event per stage, and the run's): an
		// Event is large, and growing the list from nothing copied each one three times.
		events: make([]Event, 0, min(2*len(pd.Stages)+1, 32)),
	}
	b.tools = toolSet{r: r, inputs: inputs}
	if r.cfg.Store != nil {
		b.tools.rec = &b.rec
	}
	b.shares.n = 1 // the pipeline's line
	b.run = run{
		r: r, pd: pd, inputs: inputs, st: &b.st, list: pd.Stages,
		tools:  &b.tools,
		budget: policy.NewBudget(), shares: &b.shares, mock: r.cfg.Mocks.forkInto(&b.mocks),
	}
	rn := &b.run
	if r.cfg.Hooks != nil {
		rn.dbg = newDebugRun()
	}
	return rn
}

// sub makes the run of a pipeline called from this one.
func (rn *run) sub(pd *lang.PipelineDecl, inputs map[string]any) *run {
	data := make(map[string]any, len(inputs))
	for k, v := range inputs {
		data[k] = v
	}
	st := &state{data: data, now: rn.r.cfg.Now, root: rn.st.top(), item: rn.st.item, arm: rn.st.arm, lane: rn.st.lane}
	return &run{
		r: rn.r, pd: pd, inputs: inputs, st: st, tools: rn.tools, budget: rn.budget, shares: rn.shares, mock: rn.mock, list: pd.Stages, dbg: rn.dbg,
		where: fmt.Sprintf("in pipeline %s, called from another pipeline", pd.Name.Name),
	}
}

// inner makes the run of what is nested in one of this run's stages: a branch arm's stages
// (list), an each item's or a fan-out branch's call (list nil). It shares the run's meta,
// events, tools and budget; its names see this run's names, and the names it sets stay
// its own. where says where it is, for a stage in it that would pause.
func (rn *run) inner(where string, list []*lang.Stage) *run {
	st := &state{data: map[string]any{}, now: rn.st.now, root: rn.st.top(), parent: rn.st, item: rn.st.item, arm: rn.st.arm, lane: rn.st.lane}
	in := &run{r: rn.r, pd: rn.pd, inputs: rn.inputs, st: st, tools: rn.tools, budget: rn.budget, shares: rn.shares, mock: rn.mock, where: where, list: list, dbg: rn.dbg, frames: rn.frames}
	return in
}

func (rn *run) close() { rn.tools.close() }

// mocks are the mocks this run answers from: none in a replay, which answers from its
// recording.
func (rn *run) mocks() *Mocks {
	if rn.tools.replay != nil {
		return nil
	}
	return rn.mock
}

// mockAgents is --mock, which a replay ignores.
func (rn *run) mockAgents() bool { return rn.r.cfg.MockAgents && rn.tools.replay == nil }

// sleep waits between @retry attempts; a replay does not wait.
func (rn *run) sleep(ctx context.Context, d time.Duration) error {
	if rn.tools.replay != nil {
		return ctx.Err()
	}
	return rn.r.cfg.Sleep(ctx, d)
}

func (rn *run) scope() *scope {
	return &scope{inputs: rn.inputs, st: rn.st, env: rn.r.cfg.Env}
}

// exec runs the stages from index start. When resuming, payload is the value of the stage
// at start, which the run waited at.
func (rn *run) exec(ctx context.Context, start int, payload any, resuming bool) *Result {
	out, err := rn.body(ctx, start, payload, resuming)
	res := &Result{RunID: rn.st.meta.RunID}
	switch pause := pauseOf(err); {
	case pause != nil:
		res.Status = Paused
		rn.st.mu.Lock()
		info := pause.info
		rn.st.meta.Paused = &info
		rn.st.mu.Unlock()
		rn.rec.Resume = &ResumePoint{Stage: pause.stage, Loops: rn.loops, Inputs: rn.stageIn.saved(), Outputs: rn.stageOut.saved(), Agent: pause.agent}
		at := rn.pd.Pos.String()
		if pause.agent == nil || !pause.agent.Start {
			at = rn.list[pause.stage].Pos.String()
		}
		rn.st.emit(Event{Type: "paused", At: at, Channel: info.WaitingFor, Output: info.Question})
	case err != nil:
		res.Status = Failed
		var se *stageError
		at := ""
		if errors.As(err, &se) {
			at, err = se.at, se.err
		}
		err = stoppedBy(ctx, err)
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
	// The record holds the events so far without a copy: the slice is cut at its length
	// and capacity, so events emitted later go past what the record sees (or into a new
	// array), and an emitted event is never changed.
	rec.Events = rn.st.events[:len(rn.st.events):len(rn.st.events)]
	rn.st.mu.Unlock()
	rec.Mocks = rn.mock.cursors()
	rec.Recording = rn.tools.rec.recording()
	rec.Updated = rn.r.cfg.Now().UTC()
	rec.Seal = nil
	if rec.Status == Paused {
		key, err := rn.r.sealKey()
		if err != nil {
			return fmt.Errorf("run %s: seal its record: %w", rec.RunID, err)
		}
		SealRecord(rec, key)
	}
	return rn.r.cfg.Store.Save(rec)
}

// A stageError carries where the failing stage is written.
type stageError struct {
	at  string
	err error
}

func (e *stageError) Error() string { return e.at + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }

// body runs the pipeline: its start value, then its stages. When resuming a yield or a
// listen, payload is the value of the stage at start, which the run paused at; when resuming
// an agent call that waited for approval (rn.resume), that stage (or the start value) runs
// again and its agent call goes on with its saved conversation.
func (rn *run) body(ctx context.Context, start int, payload any, resuming bool) (any, error) {
	if resuming && rn.resume == nil {
		st := rn.list[start]
		if st.As != nil {
			rn.st.set(st.As.Name, payload)
		}
		rn.putOut(start, payload)
		rn.stageDone(st)
		return rn.stages(ctx, start+1, payload)
	}
	if resuming && !rn.resume.pause.Start {
		st := rn.list[start]
		if st.Op != lang.OpFallback {
			return rn.stages(ctx, start, rn.stageIn.get(start))
		}
		// The handler of a failed stage waited: it goes on, then the stages after it.
		out, _, err := rn.stage(ctx, start, st, rn.stageIn.get(start), nil)
		if err != nil {
			var pause *errPause
			if errors.As(err, &pause) {
				pause.place(start)
				return nil, err
			}
			return nil, wrapStage(st, err)
		}
		if st.As != nil {
			rn.st.set(st.As.Name, out)
		}
		rn.stageDone(st)
		return rn.stages(ctx, start+1, out)
	}
	v, err := rn.startValue(ctx)
	if err != nil {
		var pause *errPause
		if errors.As(err, &pause) {
			pause.placeStart()
			return nil, err
		}
		return nil, &stageError{at: rn.pd.Pos.String(), err: err}
	}
	return rn.stages(ctx, 0, v)
}

// stages runs rn.list from index i with value flowing into it, and returns what flows out
// of the last stage.
func (rn *run) stages(ctx context.Context, i int, value any) (any, error) {
	stages := rn.list
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
		var fb *lang.Stage
		if i+1 < len(stages) && stages[i+1].Op == lang.OpFallback {
			fb = stages[i+1]
		}
		if rn.dbg != nil {
			if err := rn.beforeStage(ctx, i, st, value); err != nil {
				return nil, wrapStage(st, err)
			}
		}
		rn.putIn(i, value)
		end := rn.markStage(ctx, i, st)
		out, jump, err := rn.stage(ctx, i, st, value, fb)
		end(err)
		if err != nil {
			var pause *errPause
			if errors.As(err, &pause) {
				pause.place(i)
				return nil, err
			}
			var ie *itemError
			if errors.As(err, &ie) && ie.handled {
				// A |* each's own |? already ran for the item, and failed too.
				return nil, &stageError{at: fb.Pos.String(), err: err}
			}
			if fb != nil && ctx.Err() == nil {
				rn.st.set("error", map[string]any{"code": codeOf(err), "message": err.Error(), "at": st.Pos.String()})
				if rn.dbg != nil {
					if err := rn.beforeStage(ctx, i+1, fb, value); err != nil {
						return nil, wrapStage(fb, err)
					}
				}
				rn.putIn(i+1, value)
				end := rn.markStage(ctx, i+1, fb)
				out, _, err = rn.stage(ctx, i+1, fb, value, nil)
				end(err)
				if err != nil {
					if errors.As(err, &pause) {
						pause.place(i + 1)
						return nil, err
					}
					return nil, wrapStage(fb, err)
				}
				value = out
				if fb.As != nil {
					rn.st.set(fb.As.Name, out)
				}
				rn.stageDone(fb)
				i += 2
				continue
			}
			return nil, wrapStage(st, err)
		}
		if jump >= 0 {
			i = jump
			value = rn.stageIn.get(jump)
			continue
		}
		value = out
		rn.putOut(i, out)
		if st.As != nil {
			rn.st.set(st.As.Name, out)
		}
		rn.stageDone(st)
		if st.Op == lang.OpEach && fb != nil {
			// The |? after an each handled its failed items one by one; the list is the
			// value of both.
			if fb.As != nil {
				rn.st.set(fb.As.Name, out)
			}
			i++
		}
		i++
	}
	return value, nil
}

// stageDone emits the "stage" event of a finished stage of the pipeline the run started
// with (the stages of a called pipeline or a branch arm emit none).
func (rn *run) stageDone(st *lang.Stage) {
	if rn.where == "" {
		rn.st.emit(Event{Type: "stage", At: rn.r.stageAt(st), Target: rn.r.stageTarget(st)})
	}
}

// wrapStage says which stage err comes from, unless it already does: a failure inside a
// branch arm keeps the place of the stage in the arm. (A called pipeline's failure is
// wrapped, and stays at the calling stage.)
func wrapStage(st *lang.Stage, err error) error {
	if _, ok := err.(*stageError); ok {
		return err
	}
	return &stageError{at: st.Pos.String(), err: err}
}

func codeOf(err error) string {
	if c := errcode.Code(err); c != "" {
		return c
	}
	return CodeInternal
}

func (rn *run) startValue(ctx context.Context) (any, error) {
	switch x := rn.pd.Start.(type) {
	case nil:
		return nil, nil
	case *lang.Call:
		if rn.dbg != nil {
			if err := rn.beforeStart(ctx, x); err != nil {
				return nil, err
			}
		}
		return rn.call(ctx, x, nil, callOpts{})
	default:
		return rn.scope().eval(x)
	}
}

// stage runs stage i on value. jump, when not -1, is the stage a loop goes back to. fb is
// the |? stage after it, if any, which a |* each runs for each item that fails.
func (rn *run) stage(ctx context.Context, i int, st *lang.Stage, value any, fb *lang.Stage) (out any, jump int, err error) {
	switch st.Op {
	case lang.OpLoop:
		j, err := rn.loop(i, st, value)
		return value, j, err
	case lang.OpYield:
		q, err := rn.scope().eval(st.Call.Args[0].Value)
		if err != nil {
			return nil, -1, err
		}
		out, err := rn.wait(ctx, i, Interrupt{Channel: ChannelYield, Message: text(q), Named: map[string]any{"question": q}, At: st.Pos.String()}, "|! yield", q)
		return out, -1, err
	case lang.OpListen:
		ch := listenChannel(st)
		out, err := rn.wait(ctx, i, Interrupt{Channel: ch, Message: fmt.Sprintf("waiting for a signal on channel %q", ch), Named: map[string]any{"channel": ch}, At: st.Pos.String()}, "~> listen", nil)
		return out, -1, err
	case lang.OpFanOut:
		out, err := rn.fanOut(ctx, st, value, rn.flowNames(i))
		return out, -1, err
	case lang.OpEach:
		out, err := rn.each(ctx, st, fb, value)
		return out, -1, err
	case lang.OpBranch:
		out, err := rn.branch(ctx, st, value)
		return out, -1, err
	default:
		opts := callOpts{feedback: rn.feedback[i], at: rn.r.stageAt(st), valueNames: rn.flowNames(i)}
		delete(rn.feedback, i)
		if d := st.Directive("correct"); d != nil {
			opts.correct = directiveInt(d)
		}
		out, err := rn.directedCall(ctx, st, st.Call, value, opts)
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
			err = &Error{Code: CodeTimeout, Err: err,
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
		if err := rn.sleep(ctx, wait); err != nil {
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
		if callsAgent(rn.list[j], agent) {
			target = j
			break
		}
	}
	if target < 0 {
		return -1, errorf(CodeCondition, "loop: no stage before it calls %s", agent)
	}
	if rn.loops == nil {
		rn.loops, rn.feedback = map[int]int{}, map[int]string{}
	}
	rn.loops[i]++
	rn.feedback[target] = fmt.Sprintf("This is pass %d. After your previous answer, the check %q still holds, so the work is not done.\n\nYour previous answer:\n%s\n\nWhat the pipeline saw last:\n%s",
		rn.loops[i]+1, cond, text(rn.stageOut.get(target)), text(value))
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
