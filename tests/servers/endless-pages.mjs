// endless-pages.mjs — a raw JSON-RPC stdio server (no SDK) whose tools/list never ends.
// MODE=same: one tool per page and the same nextCursor forever; MODE=new (default): PER_PAGE tools
// (default 50) per page and a new nextCursor every page. 2025-era handshake only.
import { createInterface } from "node:readline";

const mode = process.env.MODE ?? "new";
const perPage = Number(process.env.PER_PAGE ?? 50);
let page = 0;
const send = (msg) => process.stdout.write(JSON.stringify(msg) + "\n");
createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === "initialize") {
    send({ jsonrpc: "2.0", id: msg.id, result: {
      protocolVersion: "2025-11-25", capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "endless", version: "1.0.0" }, instructions: "Call t0 first.",
    } });
  } else if (msg.method === "tools/list") {
    page += 1;
    const n = mode === "same" ? 1 : perPage;
    const tools = Array.from({ length: n }, (_, i) => ({
      name: `t${(page - 1) * n + i}`, description: "A tool.", inputSchema: { type: "object" },
    }));
    send({ jsonrpc: "2.0", id: msg.id, result: { tools, nextCursor: mode === "same" ? "same" : `c${page}` } });
  } else {
    send({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } });
  }
});
