// Package mcpserver owns exposing a program's pipelines as MCP tools: one tool per pipeline,
// its doc comment as the description, its parameters as the input schema, annotations from
// what it can reach, and a result per run status. It speaks MCP on newline-delimited stdio
// (`halo mcp`, ServeStdio) and over stateless Streamable HTTP with JSON responses
// (HTTPHandler, which `halo serve` mounts at /mcp behind the browser checks and the token).
//
// The protocol itself (initialize, server/discover, tools/list, tools/call, logging/setLevel,
// cancellation, the versions 2024-11-05 to 2026-07-28) is github.com/mark3labs/mcp-go's
// server; this package adds the two transports, each with its own limits, and what a call
// does: run the pipeline through host/runtime, report progress and events while it runs,
// and when the run pauses at a |! yield and the client can ask its user (elicitation), ask
// and continue the run with the answer.
package mcpserver
