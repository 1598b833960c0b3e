package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"halolang.dev/halo/host/check"
	"halolang.dev/halo/host/lang"
	"halolang.dev/halo/host/model"
	"halolang.dev/halo/host/store"
	"halolang.dev/halo/host/tool"
)

// ModelOpener returns the provider for a model reference ("openai/gpt-4o-mini") and the
// model id to put in its requests.
type ModelOpener func(ref string) (model.Provider, string, error)

// Config is what a Runtime is built from. Everything from outside (environment, clock,
// providers, files) is handed in.
type Config struct {
	// Tools opens the providers declarations name. Nil means an empty registry: every tool
	// call must then be mocked.
	Tools *tool.Registry
	// Models opens model providers. Nil means model.Open with Env.
	Models ModelOpener
	// Prices prices model calls for MaxSpend's max_tokens cap; nil means the shipped table.
	Prices model.Prices
	// Env is the environment the CLI read (Env.NAME, API keys).
	Env map[string]string
	// Dir is the project folder declarations' relative paths resolve against.
	Dir string
	// File is the .halo file the run comes from, as recorded in run records when the
	// pipeline's declaration does not say (a program parsed without a file name).
	File string
	// Stores opens File and VectorStore declarations, shared by every run (one index, its
	// vectors held once); nil means each run opens its own, closed when it ends. Its Mock
	// should be MockAgents: mocked runs embed without a model.
	Stores *store.Set
	// Mocks answers targets instead of models and tools; nil means none.
	Mocks *Mocks
	// MockScope, when set, is more of the project whose declarations mock keys may name
	// besides the program's: the other .halo files beside a mocks file, so that one mocks
	// file serves a run of any one of them (see CheckMocks). Keys that name only its
	// declarations answer nothing in this program.
	MockScope *lang.Program
	// MockAgents makes every agent call that no mock answers return a fixed text without
	// calling a model (halo run --mock).
	MockAgents bool
	// Store saves run records (host/runstore's stores); nil means runs are not saved (and
	// cannot be resumed). A store that is also a Tracker is told as runs start
	// and continue.
	Store RunStore
	// OnEvent receives every event as it happens (halo run --events). It is called from
	// the goroutine that made the event, one call at a time.
	OnEvent func(Event)
	// OnMark, when set, is told as each run and each stage of its pipeline begin and end
	// (telemetry; see Mark).
	OnMark MarkFunc
	// OnInterrupt, when set, is asked before a run pauses: at a |! yield (channel "yield",
	// the question as message) and a ~> listen (the channel's name). Its answer becomes the
	// stage's value and the run goes on; with no answer the run pauses as it would without
	// a handler. It is also the only way a stage that cannot pause (inside a called
	// pipeline, a |* each, a fan-out or a branch arm) gets an answer.
	OnInterrupt InterruptFunc
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID makes run ids; nil means the Store's when it is an IDMaker, else 16 random hex
	// digits.
	NewID func() string
	// Sleep waits between @retry attempts; nil means a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// RetryBackoff is the wait before the first @retry, doubled each time; zero means 250ms.
	RetryBackoff time.Duration
	// Logger gets warnings (LogViolation) and debug lines; nil means none.
	Logger hclog.Logger
	// Hooks, when set, is told before each step of every run (a stage, a model request, a
	// tool call) and at each policy violation, and may stop there: a debugger (host/debug).
	// Nil costs the runs nothing.
	Hooks Hooks
}

// A Runtime runs the pipelines of one validated program. It is safe for concurrent runs.
type Runtime struct {
	prog     *lang.Program
	cfg      Config
	policies map[string]*compiledPolicy
	conds    conditions
	// resuming holds the ids of the runs a Resume or Signal is continuing now, so a
	// second signal for one of them is refused instead of running it twice.
	resuming sync.Map
	// mocksChecked and mocksErr keep CheckMocks' answer: the program and the mocks' targets
	// do not change, and every run asks.
	mocksChecked sync.Once
	mocksErr     error
	// key is the store's seal key, once asked for (sealKey).
	keyMu sync.Mutex
	key   []byte
	// texts is where each stage of the program's pipelines is written and what it calls,
	// as events say them, made once (New): every stage of every run names both. Read only.
	texts map[*lang.Stage]stageText
}

type stageText struct{ at, target string }

// stageTexts lists the texts of every stage of prog's pipelines, branch arms included.
func stageTexts(prog *lang.Program) map[*lang.Stage]stageText {
	out := map[*lang.Stage]stageText{}
	for _, d := range prog.Decls() {
		if pd, ok := d.(*lang.PipelineDecl); ok {
			lang.WalkStages(pd.Stages, func(st *lang.Stage) bool {
				out[st] = stageText{at: st.Pos.String(), target: st.Target()}
				return true
			})
		}
	}
	return out
}

// stageAt is where st is written (file:line:col).
func (r *Runtime) stageAt(st *lang.Stage) string {
	if t, ok := r.texts[st]; ok {
		return t.at
	}
	return st.Pos.String()
}

// stageTarget is what st calls, as its stage event says.
func (r *Runtime) stageTarget(st *lang.Stage) string {
	if t, ok := r.texts[st]; ok {
		return t.target
	}
	return st.Target()
}

// sealKey returns the store's key for sealing paused records, asking the store once.
func (r *Runtime) sealKey() ([]byte, error) {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.key == nil {
		key, err := r.cfg.Store.SealKey()
		if err != nil {
			return nil, err
		}
		r.key = key
	}
	return r.key, nil
}

// New prepares prog to run. prog must have passed host/check; New compiles its policies.
func New(prog *lang.Program, cfg Config) (*Runtime, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = newID
		if m, ok := cfg.Store.(IDMaker); ok {
			cfg.NewID = m.NewRunID
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Tools == nil {
		cfg.Tools = tool.NewRegistry()
	}
	if cfg.Models == nil {
		env := cfg.Env
		logger := cfg.Logger
		// One provider per model reference, for every run: a provider is safe for concurrent
		// use, and keeps what it learned (its price table, the offered tools' wire bytes).
		var opened sync.Map
		type openedModel struct {
			p  model.Provider
			id string
		}
		cfg.Models = func(ref string) (model.Provider, string, error) {
			if m, ok := opened.Load(ref); ok {
				om := m.(openedModel)
				return om.p, om.id, nil
			}
			p, id, err := model.Open(ref, model.Config{Env: env, Logger: logger})
			if err == nil {
				opened.LoadOrStore(ref, openedModel{p, id})
			}
			return p, id, err
		}
	}
	if cfg.Prices == nil {
		cfg.Prices = model.DefaultPrices()
	}
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = 250 * time.Millisecond
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	r := &Runtime{prog: prog, cfg: cfg, texts: stageTexts(prog)}
	pols, err := compilePolicies(prog)
	if err != nil {
		return nil, err
	}
	r.policies = pols
	return r, nil
}

// Load parses and validates src (one .halo file's text) and returns a Runtime for it: the
// entry point for users' Go tests. Validation errors are returned, all of them.
func Load(name, src string, cfg Config) (*Runtime, error) {
	f, diags := lang.Parse(name, []byte(src))
	if err := diags.Err(); err != nil {
		return nil, err
	}
	prog := &lang.Program{Files: []*lang.File{f}}
	if err := Validate(prog, cfg.Tools).Err(); err != nil {
		return nil, err
	}
	return New(prog, cfg)
}

// Validate runs host/check on prog with the providers of reg: the one validation every
// command that loads .halo files makes, `halo validate` among them. With a nil reg any
// provider name is accepted (every tool call must then be mocked, see Config.Tools).
func Validate(prog *lang.Program, reg *tool.Registry) lang.Diagnostics {
	return check.Check(prog, CheckConfig(reg))
}

// CheckConfig is what host/check is told about the world outside a program, each vocabulary
// from its owner: the tool provider types of reg (host/tool's registry; nil: any name), what
// they declare of their methods and options, host/model's model providers. (Policy rules are
// host/policy's, which check reads itself.)
func CheckConfig(reg *tool.Registry) check.Config {
	cfg := check.Config{
		ModelProvider:  model.Canonical,
		ModelProviders: model.Spellings(),
		CanCallTools:   model.SupportsTools,
		IsStore:        store.IsStore,
	}
	if reg != nil {
		cfg.CheckDeclaration = DeclarationChecker(reg)
		cfg.ChecksDeclaration = func(provider string) bool {
			t, ok := reg.Lookup(provider)
			return ok && t.Check != nil
		}
		cfg.IsProvider = reg.Has
		for _, t := range reg.Types() {
			cfg.Providers = append(cfg.Providers, t.Name)
		}
		cfg.ToolMethods = func(provider string) ([]tool.Method, bool) {
			t, ok := reg.Lookup(provider)
			return t.Methods, ok && t.Methods != nil
		}
	}
	return cfg
}

// DeclarationChecker adapts the registry's per-provider declaration checks (every option of
// MCP(...), say) to host/check.
func DeclarationChecker(reg *tool.Registry) func(provider string, args []any, named map[string]any) []check.DeclProblem {
	return func(provider string, args []any, named map[string]any) []check.DeclProblem {
		var out []check.DeclProblem
		for _, p := range reg.CheckDeclaration(tool.Declaration{Provider: provider, Args: args, Named: named}) {
			out = append(out, check.DeclProblem{Option: p.Option, Message: p.Message, Warning: p.Warning})
		}
		return out
	}
}

// Mock makes target answer v (see Mocks). It returns r for chaining.
func (r *Runtime) Mock(target string, v any) *Runtime {
	r.mocks().Set(target, v)
	return r
}

// MockFunc makes target answer with fn.
func (r *Runtime) MockFunc(target string, fn MockFunc) *Runtime {
	r.mocks().SetFunc(target, fn)
	return r
}

func (r *Runtime) mocks() *Mocks {
	if r.cfg.Mocks == nil {
		r.cfg.Mocks = NewMocks()
	}
	return r.cfg.Mocks
}

// Pipelines lists the program's pipeline names in source order.
func (r *Runtime) Pipelines() []string {
	var out []string
	for _, d := range r.prog.Decls() {
		if p, ok := d.(*lang.PipelineDecl); ok {
			out = append(out, p.Name.Name)
		}
	}
	return out
}

// A Result is how a run ended: `halo run --json` prints it.
type Result struct {
	Status Status `json:"status"`
	Output any    `json:"output"`
	RunID  string `json:"runId"`
	Meta   Meta   `json:"meta"`
	// Error is why a failed run failed.
	Error *ErrorInfo `json:"error,omitempty"`
	// Data is context.data when the run stopped.
	Data map[string]any `json:"-"`
}

// Run runs pipeline with inputs. A run that fails is a Result with Status Failed; the error
// is for a run that could not start (an unknown pipeline, inputs that do not fit, a record
// that could not be saved).
func (r *Runtime) Run(ctx context.Context, pipeline string, inputs map[string]any) (*Result, error) {
	pd := r.prog.Pipeline(pipeline)
	if pd == nil {
		return nil, errorf(CodeInput, "no pipeline %s (have: %s)", pipeline, strings.Join(r.Pipelines(), ", "))
	}
	in, err := bindInputs(pd, inputs)
	if err != nil {
		return nil, err
	}
	if err := r.CheckMocks(); err != nil {
		return nil, err
	}
	rn := r.newRun(pd, in)
	rn.traced(ctx)
	file := pd.Pos.File // the file that declares the pipeline, whatever folder was loaded
	if file == "" {
		file = r.cfg.File
	}
	rn.rec = &Record{
		RunID: rn.st.meta.RunID, File: file, Pipeline: pipeline, Inputs: in,
		Started: r.cfg.Now().UTC(),
	}
	defer rn.close()
	if t, ok := r.cfg.Store.(Tracker); ok {
		rn.rec.Status, rn.rec.Meta, rn.rec.Updated = Running, rn.st.meta, rn.rec.Started
		if ctx, err = t.Begin(ctx, rn.rec); err != nil {
			return nil, err
		}
	}
	marked := rn.markRun(ctx, false)
	res := rn.exec(ctx, 0, nil, false)
	marked(res)
	return res, rn.save(res)
}

// Resume continues the paused run id with payload as the value of the stage it waits at,
// whatever channel that is (a |! yield, a ~> listen); id "last" means the most recently
// paused run. It needs a Store. See Signal.
func (r *Runtime) Resume(ctx context.Context, id string, payload any) (*Result, error) {
	return r.signal(ctx, id, "", payload)
}

// Signal answers the paused run id on channel with payload and continues it: the payload
// is the value of the stage the run waits at (a |! yield waits on channel "yield", a
// ~> listen("orders") on "orders"). A run that cannot be found or read, that is not
// paused, that waits on another channel, or whose file no longer has the stage it paused
// at, is a RUN_RECORD error, and its record is left as it was. It needs a Store.
func (r *Runtime) Signal(ctx context.Context, id, channel string, payload any) (*Result, error) {
	if channel == "" {
		return nil, errorf(CodeRun, "a signal needs a channel")
	}
	return r.signal(ctx, id, channel, payload)
}

// signal continues a paused run; channel "" takes whatever channel the run waits on.
func (r *Runtime) signal(ctx context.Context, id, channel string, payload any) (*Result, error) {
	if r.cfg.Store == nil {
		return nil, errorf(CodeRun, "resume needs a run store")
	}
	if err := r.CheckMocks(); err != nil {
		return nil, err
	}
	if id == "last" {
		latest, err := r.cfg.Store.Latest()
		if err != nil {
			return nil, err
		}
		id = latest
	}
	if _, busy := r.resuming.LoadOrStore(id, true); busy {
		return nil, errorf(CodeRun, "run %s is being resumed already; signal it again once it pauses", id)
	}
	defer r.resuming.Delete(id)
	rec, err := r.cfg.Store.Load(id)
	if err != nil {
		return nil, err
	}
	if rec.Status == Paused {
		// What the record says is what the run paused with, or it does not go on.
		key, err := r.sealKey()
		if err != nil {
			return nil, err
		}
		if err := CheckSeal(rec, key); err != nil {
			return nil, err
		}
	}
	pd, in, err := r.resumable(rec, channel)
	if err != nil {
		return nil, err
	}
	if t, ok := r.cfg.Store.(Tracker); ok {
		if ctx, err = t.Begin(ctx, rec); err != nil {
			return nil, err
		}
	}
	rn := r.newRun(pd, in)
	rn.traced(ctx)
	rn.rec = rec
	rn.st.meta = rec.Meta
	rn.st.meta.Paused = nil
	if rec.Data != nil {
		rn.st.data = rec.Data
	}
	rn.st.events = rec.Events
	if len(rec.Resume.Loops) > 0 {
		rn.loops, rn.feedback = make(map[int]int, len(rec.Resume.Loops)), map[int]string{}
	}
	for k, v := range rec.Resume.Loops {
		rn.loops[k] = v
	}
	for k, v := range rec.Resume.Inputs {
		rn.putIn(k, v)
	}
	for k, v := range rec.Resume.Outputs {
		rn.putOut(k, v)
	}
	if rn.tools.rec != nil && rec.Recording != nil {
		// The run records on after what it recorded before it paused.
		rn.tools.rec.rec = *rec.Recording.clone()
	}
	if rec.Resume.Agent != nil {
		rn.resume = &approvalResume{pause: rec.Resume.Agent, payload: payload}
	} else if i := rec.Resume.Stage; i >= 0 && i < len(pd.Stages) {
		// The answer to a yield or a listen, for a replay of the run.
		rn.record(Recorded{Kind: RecordedAnswer, Target: rec.Meta.Paused.WaitingFor, At: pd.Stages[i].Pos.String(), Answer: payload})
	}
	rn.mock.seek(rec.Mocks)
	defer rn.close()
	marked := rn.markRun(ctx, true)
	res := rn.exec(ctx, rec.Resume.Stage, payload, true)
	marked(res)
	return res, rn.save(res)
}

// Replay runs rec's pipeline again with its inputs, answering every model request, tool
// call, approval and yield or listen from rec.Recording instead of asking a model, a tool
// or a person: nothing is started and no key is needed, so a changed policy or prompt can be
// tried against a run that happened. Calls are answered by the recorded call of the same
// target (and, for tools and approvals, the same arguments) in the order they were made;
// the first the recording cannot answer fails the run with REPLAY_DIVERGED saying what
// differed. A value a person set in a debugger (Step.Set) is set again before the same
// stage, on the same pass; a call a person answered (Step.Skip) is answered with their value. Mocks, the interrupt handler and the store are not used: the replay is not
// saved, rec is left as it is, and the result keeps rec's run id. It ends paused where the
// recorded run was never answered. A record without a recording, or whose pipeline or
// inputs no longer fit the file, is a RUN_RECORD error.
func (r *Runtime) Replay(ctx context.Context, rec *Record) (*Result, error) {
	id := rec.RunID
	if rec.Recording == nil {
		return nil, errorf(CodeRun, "run %s has no recording to replay (it was saved by a version of Halo that did not record runs)", id)
	}
	pd := r.prog.Pipeline(rec.Pipeline)
	if pd == nil {
		return nil, errorf(CodeRun, "run %s ran pipeline %s, which this file does not declare", id, orUnknown(rec.Pipeline))
	}
	in, err := bindInputs(pd, rec.Inputs)
	if err != nil {
		return nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: its inputs no longer fit pipeline %s: %v", id, pd.Name.Name, err), Err: err}
	}
	rn := r.newRun(pd, in)
	rn.st.meta.RunID = id
	rn.tools.rec, rn.tools.replay = nil, newReplayer(rec.Recording)
	rn.dbg = nil // a replay tells no Hooks
	if rec.Recording.hasSets() {
		rn.dbg = newDebugRun()
	}
	if rec.Status == Paused && rec.Resume != nil && rec.Resume.Agent != nil {
		w := rec.Resume.Agent.Call
		rn.tools.replay.waiting = &w
	}
	rn.rec = &Record{RunID: id, File: rec.File, Pipeline: rec.Pipeline, Inputs: in}
	defer rn.close()
	return rn.exec(ctx, 0, nil, false), nil
}

// resumable checks that rec is a paused run this program can go on with, waiting on
// channel ("" for any), and returns its pipeline and inputs.
func (r *Runtime) resumable(rec *Record, channel string) (*lang.PipelineDecl, map[string]any, error) {
	id := rec.RunID
	if rec.Status != Paused || rec.Resume == nil {
		return nil, nil, errorf(CodeRun, "run %s is %s, not paused; only a paused run can be resumed", id, orUnknown(string(rec.Status)))
	}
	if rec.Meta.Paused == nil || rec.Meta.Paused.WaitingFor == "" {
		return nil, nil, errorf(CodeRun, "run %s: the record does not say what the run waits for", id)
	}
	waiting := rec.Meta.Paused.WaitingFor
	if channel != "" && channel != waiting {
		return nil, nil, errorf(CodeRun, "run %s waits on channel %q, not %q", id, waiting, channel)
	}
	pd := r.prog.Pipeline(rec.Pipeline)
	if pd == nil {
		return nil, nil, errorf(CodeRun, "run %s ran pipeline %s, which this file does not declare", id, orUnknown(rec.Pipeline))
	}
	i := rec.Resume.Stage
	if waiting == ChannelApproval || rec.Resume.Agent != nil {
		if err := r.approvalResumable(rec, pd); err != nil {
			return nil, nil, err
		}
	} else if i < 0 || i >= len(pd.Stages) || !waitsOn(pd.Stages[i], waiting) {
		return nil, nil, errorf(CodeRun, "run %s paused at stage %d waiting on %q, and stage %d of pipeline %s in this file does not; was the file changed?", id, i+1, waiting, i+1, pd.Name.Name)
	}
	in, err := bindInputs(pd, rec.Inputs)
	if err != nil {
		return nil, nil, &Error{Code: CodeRun, Message: fmt.Sprintf("run %s: its inputs no longer fit pipeline %s: %v", id, pd.Name.Name, err), Err: err}
	}
	return pd, in, nil
}

// approvalResumable checks the agent call a run paused for approval at: the record names
// it, pipeline pd still has that agent call at that place, and the saved conversation waits
// at the call the record names.
func (r *Runtime) approvalResumable(rec *Record, pd *lang.PipelineDecl) error {
	id, ap := rec.RunID, rec.Resume.Agent
	if rec.Meta.Paused.WaitingFor != ChannelApproval || ap == nil {
		return errorf(CodeRun, "run %s: the record does not say which agent call waits for approval", id)
	}
	var c *lang.Call
	place := fmt.Sprintf("the start of pipeline %s", pd.Name.Name)
	if ap.Start {
		c, _ = pd.Start.(*lang.Call)
	} else if i := rec.Resume.Stage; i >= 0 && i < len(pd.Stages) {
		place = fmt.Sprintf("stage %d of pipeline %s", i+1, pd.Name.Name)
		if st := pd.Stages[i]; st.Op == lang.OpThen || st.Op == lang.OpFallback {
			c = st.Call
		}
	} else {
		place = fmt.Sprintf("stage %d of pipeline %s, which has %d stages,", i+1, pd.Name.Name, len(pd.Stages))
	}
	if c == nil || c.Recv == nil || r.prog.Agent(c.Recv.Name) == nil || c.Target() != ap.Target {
		return errorf(CodeRun, "run %s waits for approval in agent call %s, and %s in this file is not that call; was the file changed?", id, orUnknown(ap.Target), place)
	}
	if cv := ap.Conversation; cv != nil {
		n := len(cv.Results)
		if n >= len(cv.Pending) || cv.Pending[n].ID != ap.Call.ID {
			return errorf(CodeRun, "run %s: the saved conversation of %s does not wait at the call the record names", id, ap.Target)
		}
	}
	return nil
}

// waitsOn reports whether st is a stage that waits on channel.
func waitsOn(st *lang.Stage, channel string) bool {
	switch st.Op {
	case lang.OpYield:
		return channel == ChannelYield
	case lang.OpListen:
		return listenChannel(st) == channel
	}
	return false
}

// listenChannel returns a ~> listen("channel") stage's channel.
func listenChannel(st *lang.Stage) string {
	if len(st.Call.Args) == 1 {
		if s, ok := st.Call.Args[0].Value.(*lang.StringLit); ok {
			return s.Value
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func newID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b[:])
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// bindInputs checks inputs against the pipeline's parameters: every parameter is required,
// no unknown name is accepted, and strings given for typed parameters (halo run --input
// k=v) are converted.
func bindInputs(pd *lang.PipelineDecl, inputs map[string]any) (map[string]any, error) {
	out := map[string]any{}
	known := map[string]bool{}
	var missing []string
	for _, p := range pd.Params {
		known[p.Name.Name] = true
		v, ok := inputs[p.Name.Name]
		if !ok {
			missing = append(missing, p.Name.Name)
			continue
		}
		cv, err := convertInput(p, v)
		if err != nil {
			return nil, err
		}
		out[p.Name.Name] = cv
	}
	var unknown []string
	for k := range inputs {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	switch {
	case len(unknown) > 0:
		return nil, errorf(CodeInput, "pipeline %s has no parameter %s (its parameters: %s)", pd.Name.Name, strings.Join(unknown, ", "), paramList(pd))
	case len(missing) > 0:
		return nil, errorf(CodeInput, "pipeline %s needs input %s (its parameters: %s)", pd.Name.Name, strings.Join(missing, ", "), paramList(pd))
	}
	return out, nil
}

func paramList(pd *lang.PipelineDecl) string {
	parts := make([]string, len(pd.Params))
	for i, p := range pd.Params {
		parts[i] = p.Name.Name + ": " + p.Type.String()
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
