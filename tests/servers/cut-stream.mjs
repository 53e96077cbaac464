// cut-stream.mjs — a 2025-era Streamable HTTP server (no SDK: the wire is the test's subject) whose tools/call of
// `cut` answers with an event stream that closes mid-call: a priming event (an event id, `retry: 200`), then the
// stream ends without the answer. A GET with that Last-Event-ID resumes it: with REPLAY=1 (the default) the answer
// comes on the resumed stream; with REPLAY=0 the resumption is an empty stream at once (what a server that cannot
// replay sends), so only a deadline ends the call. `ok` answers at once; `tally` counts its calls (a server with
// state of its own, shared by every client). With ERA=2026 it is a stateless 2026-07-28 server instead (it answers
// `server/discover`, issues no session, and its results carry `resultType`); `cut` is cut the same way. Port from
// argv[2] (default 0 = ephemeral); prints `listening on http://127.0.0.1:PORT/mcp`. GET /resumed answers how many
// resumptions it served.
import http from "node:http";

const replay = process.env.REPLAY !== "0";
const modern = process.env.ERA === "2026";
const version = modern ? "2026-07-28" : "2025-11-25";
const info = { name: "cut-stream", version: "1.0.0" };
let resumed = 0;
let calls = 0;
// Each cut call's answer, by the event id its stream ended at.
const pending = new Map();

const tools = [
  { name: "cut", description: "Its stream closes mid-call.", inputSchema: { type: "object" } },
  { name: "ok", description: "Answers at once.", inputSchema: { type: "object" } },
  { name: "tally", description: "Counts its calls: state of its own.", inputSchema: { type: "object" } },
];
let tally = 0;

function json(res, status, message, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(message));
}

// A result as this server's era shapes it.
function shaped(result) {
  return modern ? { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": info }, ...result } : result;
}

function answer(id, text) {
  return { jsonrpc: "2.0", id, result: shaped({ content: [{ type: "text", text }] }) };
}

function post(req, res, message) {
  const { id, method } = message;
  if (id === undefined) return res.writeHead(202).end();
  if (method === "initialize") {
    const result = {
      protocolVersion: version,
      capabilities: { tools: {} },
      serverInfo: info,
      instructions: "Call cut to see a stream closed mid-call.",
    };
    return json(res, 200, { jsonrpc: "2.0", id, result }, { "mcp-session-id": "cut-session" });
  }
  if (method === "server/discover" && modern) {
    const result = shaped({ supportedVersions: [version], capabilities: { tools: {} }, ttlMs: 0, cacheScope: "private" });
    return json(res, 200, { jsonrpc: "2.0", id, result });
  }
  if (method === "tools/list") return json(res, 200, { jsonrpc: "2.0", id, result: shaped({ tools }) });
  if (method === "ping") return json(res, 200, { jsonrpc: "2.0", id, result: shaped({}) });
  if (method === "tools/call" && message.params?.name === "ok") return json(res, 200, answer(id, "ok"));
  if (method === "tools/call" && message.params?.name === "tally") return json(res, 200, answer(id, String(++tally)));
  if (method === "tools/call" && message.params?.name === "cut") {
    calls += 1;
    const event = `call-${calls}`;
    pending.set(event, answer(id, `resumed ${event}`));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`id: ${event}\nretry: 200\ndata: \n\n`);
    setTimeout(() => res.end(), 300);
    return;
  }
  json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: `no ${method}` } });
}

function get(req, res) {
  const last = req.headers["last-event-id"];
  if (!last) return res.writeHead(405).end();
  resumed += 1;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const message = pending.get(last);
  if (replay && message) {
    pending.delete(last);
    res.write(`id: ${last}-answer\ndata: ${JSON.stringify(message)}\n\n`);
  }
  res.end();
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  if (url.pathname === "/resumed") {
    const text = `${resumed}\n`;
    return res.writeHead(200, { "content-type": "text/plain", "content-length": Buffer.byteLength(text) }).end(text);
  }
  if (url.pathname !== "/mcp") return res.writeHead(404).end();
  if (req.method === "GET") return get(req, res);
  if (req.method === "DELETE") return res.writeHead(200).end();
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let message;
  try {
    message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "parse error" } });
  }
  post(req, res, message);
});

server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`);
});
