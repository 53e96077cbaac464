// endless-stream.mjs — a 2025-era Streamable HTTP server (no SDK: the wire is the test's subject) whose session's GET
// stream, the one a client reads notifications and server requests from, sends one event that never ends once tool
// `flood` is called: `data: ` and 64 KiB of `x` whenever the socket takes more, until the client hangs up. Tool `ok`
// answers at once. Port from argv[2] (default 0 = ephemeral); prints `listening on http://127.0.0.1:PORT/mcp`.
// GET /streams answers {"opened", "closed", "sent"}: GET streams opened, hung up by the client, bytes written to them.
import http from "node:http";

const version = "2025-11-25";
const streams = { opened: 0, closed: 0, sent: 0 };
const tools = [
  { name: "ok", description: "Answers at once.", inputSchema: { type: "object" } },
  { name: "flood", description: "Starts the endless event on the open GET streams.", inputSchema: { type: "object" } },
];
// The open GET streams' pumps, started by `flood`.
const waiting = [];

function answer(id, text) {
  return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } };
}

function json(res, message, headers = {}) {
  res.writeHead(200, { "content-type": "application/json", ...headers }).end(JSON.stringify(message));
}

function post(res, message) {
  const { id, method } = message;
  if (id === undefined) return res.writeHead(202).end();
  if (method === "initialize") {
    const result = {
      protocolVersion: version,
      capabilities: { tools: {} },
      serverInfo: { name: "endless-stream", version: "1.0.0" },
    };
    return json(res, { jsonrpc: "2.0", id, result }, { "mcp-session-id": "endless-session" });
  }
  if (method === "tools/list") return json(res, { jsonrpc: "2.0", id, result: { tools } });
  if (method === "ping") return json(res, { jsonrpc: "2.0", id, result: {} });
  if (method === "tools/call" && message.params?.name === "ok") return json(res, answer(id, "ok"));
  if (method === "tools/call" && message.params?.name === "flood") {
    const pumps = waiting.splice(0);
    json(res, answer(id, `flooding ${pumps.length} streams`));
    return pumps.forEach((pump) => pump());
  }
  json(res, { jsonrpc: "2.0", id, error: { code: -32601, message: `no ${method}` } });
}

// The session's stream: the event that never ends.
function endless(res) {
  streams.opened += 1;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(": open\n\n");
  const filler = Buffer.alloc(64 * 1024, "x");
  let open = true;
  res.on("close", () => {
    open = false;
    streams.closed += 1;
  });
  const pump = () => {
    while (open) {
      streams.sent += filler.length;
      if (!res.write(filler)) return res.once("drain", pump);
    }
  };
  waiting.push(() => {
    if (!open) return;
    res.write("data: ");
    pump();
  });
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname === "/streams") {
    const text = JSON.stringify(streams);
    return res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
  }
  if (url.pathname !== "/mcp") return res.writeHead(404).end();
  if (req.method === "GET") return req.headers["last-event-id"] ? res.writeHead(405).end() : endless(res);
  if (req.method === "DELETE") return res.writeHead(200).end();
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let message;
  try {
    message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return res.writeHead(400).end();
  }
  post(res, message);
});

server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`);
});
