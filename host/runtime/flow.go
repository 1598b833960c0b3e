package runtime

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"halolang.dev/halo/host/lang"
)

// defaultEachLimit is how many calls of a |* each run at once without @limit.
const defaultEachLimit = 8

// fan runs f(ctx, k) for every k in [0, n) on at most limit goroutines, which take the next
// k as they finish one, so a long list never has a goroutine per item. The first f to fail
// cancels ctx for the others and no new k starts; fan returns that error after every f it
// started has returned.
func fan(ctx context.Context, n, limit int, f func(ctx context.Context, k int) error) error {
	if n == 0 {
		return nil
	}
	if limit <= 0 || limit > n {
		limit = n
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := int(next.Add(1) - 1)
				if k >= n {
					return
				}
				if err := f(ctx, k); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// stageLimit reads a stage's @limit(n); def when it has none.
func stageLimit(st *lang.Stage, def int) int {
	if d := st.Directive("limit"); d != nil {
		if n := directiveInt(d); n > 0 {
			return n
		}
	}
	return def
}

// fanOut runs a |* { ... } stage's calls concurrently on value (at most @limit at once)
// and gathers their outputs in order. The first failure cancels the others; fanOut returns
// after every branch has.
func (rn *run) fanOut(ctx context.Context, st *lang.Stage, value any, names []string) (any, error) {
	outs := make([]any, len(st.Calls))
	where := "inside the |* fan-out at " + st.Pos.String()
	limit := stageLimit(st, len(st.Calls))
	defer rn.shares.split(min(limit, len(st.Calls)))()
	err := fan(ctx, len(st.Calls), limit, func(ctx context.Context, k int) error {
		c := st.Calls[k]
		in := rn.inner(where, nil)
		in.st.lane += "*" + strconv.Itoa(k)
		opts := callOpts{at: c.Pos().String(), valueNames: names}
		if d := st.Directive("correct"); d != nil {
			opts.correct = directiveInt(d)
		}
		out, err := in.directedCall(ctx, st, c, value, opts)
		if err != nil {
			return fmt.Errorf("%s: %w", c.Target(), err)
		}
		outs[k] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outs, nil
}

// An itemError is the failure of one item of a |* each. handled says the stage's own |?
// ran for the item and failed too, so it must not run again for the whole stage.
type itemError struct {
	index   int
	handled bool
	err     error
}

func (e *itemError) Error() string { return fmt.Sprintf("item %d: %s", e.index, e.err) }
func (e *itemError) Unwrap() error { return e.err }

// each runs a |* each stage: its call once per item of value, at most @limit (default 8)
// at once, each item as the call's flowing value and its name. The result lists the
// calls' results in the items' order. The first failure cancels the items still running
// and starts no more, unless the stage is followed by |? (fb): then fb runs for each
// failed item on its own, with the item as its flowing value and context.data.error, and
// its value takes the item's place. @retry, @timeout and @correct apply to each item.
func (rn *run) each(ctx context.Context, st *lang.Stage, fb *lang.Stage, value any) (any, error) {
	items, ok := value.([]any)
	if !ok {
		return nil, errorf(CodeType, "|* each %s(...) goes over a list, and the flowing value is %s", st.Call.Target(), describe(value))
	}
	outs := make([]any, len(items))
	name := st.ItemName()
	where := "inside |* each at " + st.Pos.String()
	opts := callOpts{at: st.Pos.String(), valueNames: []string{name}}
	if d := st.Directive("correct"); d != nil {
		opts.correct = directiveInt(d)
	}
	limit := stageLimit(st, defaultEachLimit)
	defer rn.shares.split(min(limit, len(items)))()
	err := fan(ctx, len(items), limit, func(ctx context.Context, k int) error {
		item := items[k]
		in := rn.inner(where, nil)
		index := k
		in.st.item = &index
		in.st.lane += "#" + strconv.Itoa(k)
		in.st.data[name] = item
		out, err := in.directedCall(ctx, st, st.Call, item, opts)
		if err != nil && fb != nil && ctx.Err() == nil {
			in.st.set("error", map[string]any{"code": codeOf(err), "message": err.Error(), "at": st.Pos.String()})
			out, err = in.directed(ctx, fb, func(ctx context.Context, attempt int) (any, error) {
				return in.call(ctx, fb.Call, item, callOpts{at: fb.Pos.String(), attempt: attempt})
			})
			if err != nil {
				return &itemError{index: k, handled: true, err: err}
			}
		}
		if err != nil {
			return &itemError{index: k, err: err}
		}
		outs[k] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outs, nil
}

// branch runs a |> branch stage: the conditions in order, then the stages of the first arm
// whose condition holds (or else), on value. Its value is the arm's; with no arm taken
// value passes through.
func (rn *run) branch(ctx context.Context, st *lang.Stage, value any) (any, error) {
	sc := rn.scope()
	for _, arm := range st.Arms {
		if arm.Cond != nil {
			holds, err := rn.r.conds.eval(arm.Cond.Value, sc)
			if err != nil {
				return nil, err
			}
			if !holds {
				continue
			}
		}
		rn.st.emit(Event{Type: "branch", At: st.Pos.String(), Arm: arm.Label()})
		in := rn.inner(fmt.Sprintf("inside the branch arm %q at %s", arm.Label(), arm.Pos), arm.Stages)
		in.st.arm = arm.Label()
		in.st.lane += "?" + arm.Label()
		if rn.dbg != nil {
			in.frames = rn.nest(Frame{Pipeline: rn.pd.Name.Name, At: st.Pos.String(), Arm: arm.Label()})
		}
		return in.stages(ctx, 0, value)
	}
	rn.st.emit(Event{Type: "branch", At: st.Pos.String(), Message: "no arm taken; the value passes through"})
	return value, nil
}
