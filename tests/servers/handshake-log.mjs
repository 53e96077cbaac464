// handshake-log.mjs — raw JSON-RPC (no SDK), a 2025-only server that logs each request it is sent: one JSON line
// {method, protocolVersion} per request (initialize's params.protocolVersion, else the request's
// _meta["io.modelcontextprotocol/protocolVersion"]) appended to LOG. server/discover is answered with an empty
// result `{}` (DISCOVER=empty, the default) or -32601 (DISCOVER=error); initialize with the version asked; tool `ping`.
// `node handshake-log.mjs` serves stdio; `node handshake-log.mjs http` serves Streamable HTTP on an ephemeral port
// (no sessions, JSON answers) and prints `listening http://127.0.0.1:<port>/mcp`.
import { appendFileSync } from "node:fs";
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const log = (request) => {
  const params = request.params ?? {};
  const version = params.protocolVersion ?? params._meta?.["io.modelcontextprotocol/protocolVersion"] ?? null;
  if (process.env.LOG) appendFileSync(process.env.LOG, JSON.stringify({ method: request.method, protocolVersion: version }) + "\n");
};

// The answer to one message, or null for a notification.
function answer(message) {
  if (message.id === undefined || !message.method) return null;
  log(message);
  const ok = (result) => ({ jsonrpc: "2.0", id: message.id, result });
  switch (message.method) {
    case "server/discover":
      return process.env.DISCOVER === "error"
        ? { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }
        : ok({});
    case "initialize":
      return ok({
        protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "handshake-log", version: "1.0.0" },
        instructions: "Logs what it is sent.",
      });
    case "tools/list":
      return ok({ tools: [{ name: "ping", description: "Answers pong.", inputSchema: { type: "object" } }] });
    case "ping":
      return ok({});
    default:
      return { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } };
  }
}

if (process.argv[2] === "http") {
  const server = createServer((req, res) => {
    if (req.method !== "POST") return res.writeHead(405).end();
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const reply = answer(JSON.parse(body));
      if (!reply) return res.writeHead(202).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  server.listen(0, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${server.address().port}/mcp`));
} else {
  createInterface({ input: process.stdin }).on("line", (line) => {
    const reply = line.trim() && answer(JSON.parse(line));
    if (reply) process.stdout.write(JSON.stringify(reply) + "\n");
  });
}
