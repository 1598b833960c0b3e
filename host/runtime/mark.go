package runtime

import (
	"context"
	"errors"
	"strings"
	"time"

	"halolang.dev/halo/host/lang"
)

// A Mark says that a run, or a stage of the pipeline it started with, begins or ends.
// Telemetry (host/telemetry) times its spans by marks and fills them from events. Marks are
// not events: they are neither written by --events nor kept in run records. The stages of a
// called pipeline, a branch arm, a |* each item or a fan-out branch have no marks of their
// own: what they do happens inside the mark of the stage they belong to.
type Mark struct {
	// Kind is "run" or "stage".
	Kind  string
	RunID string
	// Pipeline is the pipeline the run runs.
	Pipeline string
	// End is false as the run or stage begins and true as it ends.
	End  bool
	Time time.Time
	// Resumed is set on the begin mark of a run that continues from a pause.
	Resumed bool
	// Index is a stage's index in its pipeline, from 0; At is where it is written
	// (file:line:col), Op its operator ("|>", "|?", "|* each", ...) and Target what it calls
	// ("Agent.task", "Tool.method", a pipeline, a fan-out's targets joined with ", ").
	Index  int
	At     string
	Op     string
	Target string
	// Status is how a run ended, on its end mark.
	Status Status
	// Error is why a stage or a run failed, on its end mark.
	Error *ErrorInfo
}

// A MarkFunc receives marks. ctx is the run's context (on a run's begin mark, the context
// Run or Resume was called with). It is called from the run's own goroutine, never for two
// marks of one run at once.
type MarkFunc func(ctx context.Context, m Mark)

// markRun tells Config.OnMark that the run begins, and returns what tells it that it ended.
func (rn *run) markRun(ctx context.Context, resumed bool) func(*Result) {
	on := rn.r.cfg.OnMark
	if on == nil {
		return func(*Result) {}
	}
	id, name := rn.st.meta.RunID, rn.pd.Name.Name
	on(ctx, Mark{Kind: "run", RunID: id, Pipeline: name, Time: rn.r.cfg.Now().UTC(), Resumed: resumed})
	return func(res *Result) {
		on(ctx, Mark{Kind: "run", RunID: id, Pipeline: name, End: true, Time: rn.r.cfg.Now().UTC(), Status: res.Status, Error: res.Error})
	}
}

// markStage tells Config.OnMark that stage i of the run's own pipeline begins, and returns
// what tells it that it ended. Nested stages (rn.where set) have no marks.
func (rn *run) markStage(ctx context.Context, i int, st *lang.Stage) func(error) {
	on := rn.r.cfg.OnMark
	if on == nil || rn.where != "" {
		return noMark
	}
	m := Mark{Kind: "stage", RunID: rn.st.meta.RunID, Pipeline: rn.pd.Name.Name, Index: i,
		At: st.Pos.String(), Op: string(st.Op), Target: markTarget(st), Time: rn.r.cfg.Now().UTC()}
	on(ctx, m)
	return func(err error) {
		m.End, m.Time = true, rn.r.cfg.Now().UTC()
		var pause *errPause
		if err != nil && !errors.As(err, &pause) {
			m.Error = infoOf(err, m.At)
		}
		on(ctx, m)
	}
}

func noMark(error) {}

// markTarget names what a stage calls.
func markTarget(st *lang.Stage) string {
	switch {
	case st.Call != nil:
		return st.Call.Target()
	case len(st.Calls) > 0:
		names := make([]string, len(st.Calls))
		for i, c := range st.Calls {
			names[i] = c.Target()
		}
		return strings.Join(names, ", ")
	}
	return ""
}
