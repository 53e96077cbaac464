// cut-stream.mjs — a 2025-era Streamable HTTP server (no SDK: the wire is the test's subject; raw-http.mjs) whose tools/call of
// `cut` answers with an event stream that closes mid-call: a priming event (an event id, `retry: 200`), then the
// stream ends without the answer. A GET with that Last-Event-ID resumes it: with REPLAY=1 (the default) the answer
// comes on the resumed stream; with REPLAY=0 the resumption is an empty stream at once (what a server that cannot
// replay sends), so only a deadline ends the call. `ok` answers at once; `tally` counts its calls (a server with
// state of its own, shared by every client). With ERA=2026 it is a stateless 2026-07-28 server instead (it answers
// `server/discover`, issues no session, and its results carry `resultType`); `cut` is cut the same way. Port from
// argv[2] (default 0 = ephemeral); prints `listening on http://127.0.0.1:PORT/mcp`. GET /resumed answers how many
// resumptions it served.
import { answer, serve } from "./raw-http.mjs";

const replay = process.env.REPLAY !== "0";
const modern = process.env.ERA === "2026";
const info = { name: "cut-stream", version: "1.0.0" };
let resumed = 0;
let calls = 0;
let tally = 0;
// Each cut call's answer, by the event id its stream ended at.
const pending = new Map();

// A tools/call result of one text, as this server's era shapes it.
function said(id, text) {
  const message = answer(id, text);
  if (modern) message.result = { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": info }, ...message.result };
  return message;
}

function send(res, message) {
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(message));
}

function onPost(req, res, { id, method, params }) {
  if (method !== "tools/call") return false;
  if (params?.name === "ok") send(res, said(id, "ok"));
  else if (params?.name === "tally") send(res, said(id, String(++tally)));
  else if (params?.name === "cut") {
    calls += 1;
    const event = `call-${calls}`;
    pending.set(event, said(id, `resumed ${event}`));
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(`id: ${event}\nretry: 200\ndata: \n\n`);
    setTimeout(() => res.end(), 300);
  } else return false;
  return true;
}

function onGet(req, res) {
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

serve({
  name: info.name,
  tools: [
    { name: "cut", description: "Its stream closes mid-call.", inputSchema: { type: "object" } },
    { name: "ok", description: "Answers at once.", inputSchema: { type: "object" } },
    { name: "tally", description: "Counts its calls: state of its own.", inputSchema: { type: "object" } },
  ],
  instructions: "Call cut to see a stream closed mid-call.",
  modern,
  session: () => "cut-session",
  paths: { "/resumed": () => `${resumed}\n` },
  onPost,
  onGet,
});
