// changing.mjs — stdio server for live-update tests: tool `first`, then `second` appears 500 ms after the first tools/list.
//
// Environment:
//   INSTRUCTIONS       instructions text (default "Version one.")
//   INSTRUCTIONS_FILE  when set, instructions are read from this file instead: on every factory call (a new
//                      connection) and again on every inbound initialize / server/discover on a live connection
//   TTL_MS             ttlMs advertised in the server/discover result (default 0; the SDK's cacheHints option)
//   INSTRUCTIONS_PER_CONNECT=1  appends " Session <8 random hex digits>." to the instructions, new for every
//                      connection (on stdio every connect is a new process): text that changes per connect
//   SECOND             the name of the tool added later (default "second")
//   EXTRA_TOOLS        after `second`, this many more tools (`extra1`, `extra2`, …) 300 ms apart, each
//                      with its own tools/list_changed (default 0)
//   INSTRUCTIONS_LEGACY  when set, the instructions answered to initialize (2025 era); server/discover keeps the
//                      others: text that differs between the eras
//
// list_changed delivery: on a 2025-era connection (initialize) the SDK sends notifications/tools/list_changed
// unsolicited. On a 2026-07-28 connection (server/discover) the SDK only delivers it to a client that opened a
// subscriptions/listen with {"notifications": {"toolsListChanged": true}}; otherwise it is dropped.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { onMessage } from "./on-message.mjs";

function currentInstructions() {
  const file = process.env.INSTRUCTIONS_FILE;
  if (file) return readFileSync(file, "utf8");
  return process.env.INSTRUCTIONS ?? "Version one.";
}

const ttlMs = Number.parseInt(process.env.TTL_MS ?? "0", 10) || 0;

serveStdio(() => {
  const session = process.env.INSTRUCTIONS_PER_CONNECT === "1" ? ` Session ${randomBytes(4).toString("hex")}.` : "";
  const server = new McpServer(
    { name: "changing-server", version: "1.0.0" },
    {
      capabilities: { tools: { listChanged: true } },
      instructions: currentInstructions() + session,
      // Cache hint for the 2026-07-28 discover result (ttlMs/cacheScope); 2025-era responses are unaffected.
      cacheHints: { "server/discover": { ttlMs } },
    }
  );
  server.registerTool("first", { description: "The first tool.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "first" }] }));

  // Watch inbound messages (via the public Transport interface) for the first tools/list, then register
  // `second` 500 ms later; registerTool on a connected server emits notifications/tools/list_changed.
  // Also refresh the instructions from INSTRUCTIONS_FILE on every handshake request: the SDK fixes them at
  // construction and has no public setter, so this assigns the Server's internal `_instructions` field
  // (read by its initialize and server/discover handlers) before the request is delivered.
  let armed = false;
  onMessage(server, (message) => {
    if (process.env.INSTRUCTIONS_FILE && (message?.method === "initialize" || message?.method === "server/discover")) {
      server.server._instructions = currentInstructions() + session;
    }
    if (process.env.INSTRUCTIONS_LEGACY !== undefined && message?.method === "initialize") {
      server.server._instructions = process.env.INSTRUCTIONS_LEGACY + session;
    }
    if (!armed && message?.method === "tools/list") {
      armed = true;
      setTimeout(() => {
        const name = process.env.SECOND ?? "second";
        server.registerTool(name, { description: "The second tool, added later.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "second" }] }));
        const extra = (n) => {
          if (n > Number(process.env.EXTRA_TOOLS ?? 0)) return;
          server.registerTool(`extra${n}`, { description: `Extra tool ${n}.`, inputSchema: {} }, async () => ({ content: [{ type: "text", text: `extra${n}` }] }));
          setTimeout(() => extra(n + 1), 300).unref();
        };
        setTimeout(() => extra(1), 300).unref();
      }, 500).unref();
    }
  });
  return server;
});
