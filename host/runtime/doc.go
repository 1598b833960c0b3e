// Package runtime owns running Halo pipelines: it opens the tools a run declares, runs the
// stages in order with a flowing value (tool calls, agent calls, System, loops, fallbacks,
// fan-outs, yields), applies stage directives (@retry, @timeout, @correct), applies each
// agent's policies through host/policy on every model call, keeps the run's context (data,
// meta), emits events, answers targets from mocks, and saves run records so a paused run can
// be resumed.
//
// cmd/halo's run and resume commands use it, and so can users' own Go tests: Load a source,
// Mock targets, Run a pipeline, and inspect the Result's output and meta.
//
// The agent tool loop (an agent choosing its own tool calls) belongs to host/agent; until it
// exists, an agent call that names tools: fails with TOOL_LOOP_UNAVAILABLE unless a mock
// answers it.
package runtime
