// Package runtime owns running Halo pipelines: it opens the tools a run declares, runs the
// stages in order with a flowing value (tool calls, agent calls, System, loops, fallbacks,
// fan-outs, yields), applies stage directives (@retry, @timeout, @correct), applies each
// agent's policies through host/policy on every model call, keeps the run's context (data,
// meta), emits events, answers targets from mocks, and saves run records so a paused run can
// be resumed: through a RunStore, by default Store (a folder of JSON files); a store that is
// also a Tracker (halo serve's) is told as runs start and continue.
//
// cmd/halo's run and resume commands use it, and so can users' own Go tests: Load a source,
// Mock targets, Run a pipeline, and inspect the Result's output and meta.
//
// Every agent call is one conversation of host/agent's tool loop: the runtime hands it the
// model provider (or a mock that answers as a model does), the offered tools, the agent's
// policies and the function that runs a call, and turns what happens into events and meta.
package runtime
