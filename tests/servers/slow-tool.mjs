// slow-tool.mjs — a server whose call can be caught mid-flight: `wait` answers after `ms` milliseconds, `pid`
// answers this process's id (so a test can kill it), `fail` answers an isError result, `cancelled` how many `wait`
// calls the client cancelled (notifications/cancelled) so far.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

let cancelled = 0;

serveStdio(() => {
  const server = new McpServer(
    { name: "slow-tool", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Call pid before wait. Never wait longer than a minute." }
  );
  server.registerTool("wait", { description: "Answer after ms milliseconds.", inputSchema: { ms: z.number() } }, async ({ ms }, ctx) => {
    const signal = ctx.mcpReq.signal;
    await new Promise((r) => {
      const t = setTimeout(r, ms);
      signal.addEventListener("abort", () => { cancelled += 1; clearTimeout(t); r(); });
    });
    return { content: [{ type: "text", text: `waited ${ms}` }] };
  });
  server.registerTool("cancelled", { description: "How many waits were cancelled.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: String(cancelled) }] }));
  server.registerTool("pid", { description: "This server's process id.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: String(process.pid) }] }));
  server.registerTool("fail", { description: "Fails.", inputSchema: {} }, async () => ({ isError: true, content: [{ type: "text", text: "failed on purpose" }] }));
  return server;
});
