// endless-stream.mjs — a Streamable HTTP server (no SDK: the wire is the test's subject) whose subscription stream
// sends one event that never ends: `data: ` and 64 KiB of `x` whenever the socket takes more, until the client hangs
// up. Port from argv[2] (default 0 = ephemeral); prints `listening on http://127.0.0.1:PORT/mcp`. Tool `ok` answers
// at once.
// - 2025 era (the default): each `initialize` opens a session of its own (`endless-1`, `endless-2`, …); a session's
//   GET stream, where a client reads notifications and server requests, stays quiet until that session calls tool
//   `flood`, then the event starts. GET /streams answers {"opened", "closed", "sent"}: GET streams opened, hung up by
//   the client, bytes written to them.
// - argv[3] `listen`: the 2026-07-28 era (server/discover, no session); each `subscriptions/listen` is acknowledged
//   and then its stream sends the event at once. GET /listens answers {"listens": [[opened, closed], …]}: when each
//   listen came and when the client hung up on it (null while open), in ms since the server started.
import { answer, json, serve } from "./raw-http.mjs";

const modern = process.argv[3] === "listen";
const streams = { opened: 0, closed: 0, sent: 0 };
const listens = [];
const filler = Buffer.alloc(64 * 1024, "x");
const started = performance.now();
const now = () => Math.round(performance.now() - started);
let sessions = 0;
// The open GET streams' pumps by session, started by that session's `flood`.
const waiting = new Map();

const tools = [{ name: "ok", description: "Answers at once.", inputSchema: { type: "object" } }];
if (!modern) tools.push({ name: "flood", description: "Starts the endless event on this session's GET stream.", inputSchema: { type: "object" } });

// Writes `data: ` and then filler until `res` closes; calls `closed` once it does.
function endless(res, closed) {
  let open = true;
  res.on("close", () => {
    open = false;
    closed();
  });
  const pump = () => {
    while (open) {
      streams.sent += filler.length;
      if (!res.write(filler)) return res.once("drain", pump);
    }
  };
  return () => {
    if (!open) return;
    res.write("data: ");
    pump();
  };
}

function eventStream(res) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

function post(req, res, { id, method, params }) {
  if (method === "tools/call" && params?.name === "ok") {
    json(res, 200, answer(id, "ok"));
    return true;
  }
  if (method === "tools/call" && params?.name === "flood" && !modern) {
    const session = req.headers["mcp-session-id"];
    const pumps = waiting.get(session) ?? [];
    waiting.delete(session);
    json(res, 200, answer(id, `flooding ${pumps.length} streams`));
    pumps.forEach((pump) => pump());
    return true;
  }
  if (method === "subscriptions/listen" && modern) {
    const listen = [now(), null];
    listens.push(listen);
    eventStream(res);
    const meta = { "io.modelcontextprotocol/subscriptionId": id };
    const acknowledged = { notifications: params?.notifications ?? {}, _meta: meta };
    const ack = { jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged", params: acknowledged };
    res.write(`data: ${JSON.stringify(ack)}\n\n`);
    endless(res, () => (listen[1] = now()))();
    return true;
  }
  return false;
}

// A session's GET stream: quiet until the session floods it.
function get(req, res) {
  const session = req.headers["mcp-session-id"];
  if (req.headers["last-event-id"] || !session) return res.writeHead(405).end();
  streams.opened += 1;
  eventStream(res);
  res.write(": open\n\n");
  const pump = endless(res, () => (streams.closed += 1));
  waiting.set(session, [...(waiting.get(session) ?? []), pump]);
}

serve({
  name: "endless-stream",
  tools,
  modern,
  session: () => `endless-${++sessions}`,
  paths: { "/streams": () => streams, "/listens": () => ({ listens }) },
  onPost: post,
  onGet: modern ? undefined : get,
});
