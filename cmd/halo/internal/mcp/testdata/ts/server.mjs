// An MCP server written with the official TypeScript SDK whose one tool, Greet, answers a
// constant: the floor halo's MCP benchmarks compare against. `node server.mjs stdio` serves
// stdin/stdout; `node server.mjs http` serves stateless Streamable HTTP with JSON responses
// on a free port of 127.0.0.1 and prints the URL. The SDK is loaded from $HALO_NPM_DIR.
import { createRequire } from "node:module";
import http from "node:http";
import path from "node:path";

const require = createRequire(path.join(process.env.HALO_NPM_DIR, "package.json"));
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { StreamableHTTPServerTransport } = require("@modelcontextprotocol/sdk/server/streamableHttp.js");
const { z } = require("zod");

function make() {
  const server = new McpServer({ name: "ts-constant", version: "1.0.0" });
  server.registerTool("Greet", { description: "Say hello.", inputSchema: { name: z.string() } },
    async () => ({ content: [{ type: "text", text: "Hello!" }] }));
  return server;
}

if (process.argv[2] === "stdio") {
  await make().connect(new StdioServerTransport());
} else {
  // The SDK's stateless pattern: a server and transport per request.
  const srv = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const server = make();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  srv.listen(0, "127.0.0.1", () => console.log(`http://127.0.0.1:${srv.address().port}/mcp`));
}
