// http.mjs — the invoice server (or with argv[3] `progress`, progress.mjs's) over Streamable HTTP on 127.0.0.1 (port
// from argv[2], default 0 = ephemeral), endpoint /mcp. With argv[3] `endless`, the invoice server whose every
// 2026-07-28 tools/call is answered by an event that never ends (16 KiB of data every millisecond, no line end)
// until the client hangs up: a hostile upstream for the gateway's event-stream reader.
// With argv[3] `route`, the invoice server and a tool `route` whose `region` argument is marked `x-mcp-header: Region`
// (answering "routed to REGION"). Every POST's MCP headers and body method and name are recorded: `GET /seen` gives
// them as JSON (`[{headers: {mcp-method, mcp-name, mcp-param-*...}, method, name}]`, the last 100).
// Serving is stateless: createMcpHandler builds a fresh server per request; 2025-era traffic (initialize, ...)
// goes through the SDK's stateless legacy fallback, 2026-07-28 traffic (server/discover with the _meta envelope)
// through the modern per-request path. No session id is issued or required.
import http from "node:http";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { invoiceServer } from "./invoice-factory.mjs";
import { progressServer } from "./progress-factory.mjs";
import { z } from "zod";

function routeServer() {
  const server = invoiceServer();
  const region = z.string().meta({ "x-mcp-header": "Region" });
  server.registerTool("route", { description: "Routes.", inputSchema: { region } }, async ({ region }) => ({
    content: [{ type: "text", text: `routed to ${region}` }],
  }));
  return server;
}

// argv[3] `progress`: the server of progress.mjs instead of the invoice server.
const factories = { progress: progressServer, route: routeServer };
const factory = factories[process.argv[3]] ?? invoiceServer;

// What each POST carried: its MCP headers, its body's method and name.
const seen = [];
function record(req, chunks) {
  const headers = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith("mcp-")) headers[name] = value;
  }
  let body = {};
  try {
    body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {}
  seen.push({ headers, method: body.method, name: body.params?.name });
  if (seen.length > 100) seen.shift();
}
const handler = createMcpHandler(factory, { onerror: (error) => process.stderr.write(`mcp: ${error.message}\n`) });

// Minimal node:http -> fetch-API bridge (the SDK's handler speaks web-standard Request/Response).
// TCP connections accepted so far, served at GET /connections (a client that
// keeps its connections alive opens few, whatever the number of messages).
let connections = 0;
const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname === "/seen") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen));
    return;
  }
  if (url.pathname === "/connections") {
    res.writeHead(200, { "content-type": "text/plain" }).end(`${connections}\n`);
    return;
  }
  if (url.pathname !== "/mcp") {
    res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    return;
  }
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    if (req.method === "POST") record(req, chunks);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url}`, {
      method: req.method,
      headers,
      body: req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks),
      signal: abort.signal,
    });
    if (process.argv[3] === "endless" && isCall(chunks)) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: ");
      const filler = "x".repeat(16 * 1024);
      const timer = setInterval(() => res.write(filler), 1);
      res.on("close", () => clearInterval(timer));
      return;
    }
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk); // SSE streams are relayed chunk by chunk
    }
    res.end();
  } catch (error) {
    process.stderr.write(`http bridge: ${error?.stack ?? error}\n`);
    if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
    res.end();
  }
});

function isCall(chunks) {
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")).method === "tools/call";
  } catch {
    return false;
  }
}

server.on("connection", () => {
  connections += 1;
});

const port = Number(process.argv[2] ?? 0);
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`);
});
