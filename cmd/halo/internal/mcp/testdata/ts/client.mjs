// An MCP client written with the official TypeScript SDK, for halo's tests: it connects
// over stdio (node client.mjs stdio COMMAND ARGS...) or Streamable HTTP (node client.mjs
// http URL), lists the tools, makes the calls in $CALLS ([[name, args], ...]) and prints
// { protocolVersion, tools, results } as JSON. $TOKEN, when set, is sent as a bearer token.
// It answers elicitations with $ANSWER. The SDK is loaded from $HALO_NPM_DIR, where
// scripts/setup-test-deps.sh installs it.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.HALO_NPM_DIR, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), cwd: process.cwd(), stderr: "inherit" });
} else {
  const headers = process.env.TOKEN ? { Authorization: `Bearer ${process.env.TOKEN}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), { requestInit: { headers } });
}
const client = new Client({ name: "halo-ts-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  return { action: "accept", content: { answer: process.env.ANSWER ?? "yes" } };
});
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const [name, args] of JSON.parse(process.env.CALLS ?? "[]")) {
  try {
    results.push(await client.callTool({ name, arguments: args }));
  } catch (e) {
    results.push({ thrown: String(e) });
  }
}
console.log(JSON.stringify({ protocolVersion: transport.protocolVersion ?? null, tools, results, asked }));
await client.close();
