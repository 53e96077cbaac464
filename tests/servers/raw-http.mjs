// raw-http.mjs — what the raw Streamable HTTP test servers (endless-stream.mjs, cut-stream.mjs; no SDK: the wire is
// their subject) share: the handshake of either era, tools/list, ping, the 202 for a notification, a bad body's 400,
// DELETE, their own plain-text or JSON paths, and the `listening on http://127.0.0.1:PORT/mcp` line (port from
// argv[2], default 0 = ephemeral). Each server answers the rest: `onPost(req, res, message)` (true when it answered),
// `onGet(req, res)` for the endpoint's GET.
import http from "node:http";

export const V2025 = "2025-11-25";
export const V2026 = "2026-07-28";

export function json(res, status, message, headers = {}) {
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(message));
}

// A tools/call result of one text.
export function answer(id, text) {
  return { jsonrpc: "2.0", id, result: { content: [{ type: "text", text }] } };
}

// `modern`: the 2026-07-28 handshake (server/discover; initialize is -32601) and results shaped as that era's;
// else 2025's `initialize`, answered with the session id `session()` gives.
export function serve({ name, tools, instructions, modern = false, session, paths = {}, onPost, onGet }) {
  const info = { name, version: "1.0.0" };
  const result = (r) => (modern ? { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": info }, ...r } : r);
  const ok = (res, id, r, headers) => json(res, 200, { jsonrpc: "2.0", id, result: result(r) }, headers);
  const capabilities = { tools: {} };

  function post(req, res, message) {
    const { id, method } = message;
    if (id === undefined) return res.writeHead(202).end();
    if (method === "initialize" && !modern) {
      const r = { protocolVersion: V2025, capabilities, serverInfo: info, instructions };
      return ok(res, id, r, { "mcp-session-id": session() });
    }
    if (method === "server/discover" && modern) {
      return ok(res, id, { supportedVersions: [V2026], capabilities, instructions, ttlMs: 0, cacheScope: "private" });
    }
    if (method === "tools/list") return ok(res, id, { tools });
    if (method === "ping") return ok(res, id, {});
    if (onPost(req, res, message)) return;
    json(res, 200, { jsonrpc: "2.0", id, error: { code: -32601, message: `no ${method}` } });
  }

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const own = paths[url.pathname];
    if (own) {
      const body = own();
      const text = typeof body === "string" ? body : JSON.stringify(body);
      const type = typeof body === "string" ? "text/plain" : "application/json";
      return res.writeHead(200, { "content-type": type, "content-length": Buffer.byteLength(text) }).end(text);
    }
    if (url.pathname !== "/mcp") return res.writeHead(404).end();
    if (req.method === "GET") return onGet ? onGet(req, res) : res.writeHead(405).end();
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
}
