// A real MCP host's side: the official TypeScript SDK's client connects to the server over
// Streamable HTTP with an AppKey, lists the tools and calls the ones named in the request.
//
//   node client.mjs URL APPKEY CALLS_JSON
//
// CALLS_JSON is [{"name": tool, "arguments": {...}}, ...]; the program prints
// {"tools": [names], "results": [CallToolResult, ...]} as JSON on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, key, callsJSON] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { AppKey: key } },
});
const client = new Client({ name: "kmkit-conformance", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const results = [];
for (const call of JSON.parse(callsJSON)) {
  results.push(await client.callTool(call));
}
await client.close();
process.stdout.write(JSON.stringify({ tools: tools.map((t) => t.name), results }));
