// slow-tool.mjs — a server whose call can be caught mid-flight: `wait` answers after `ms` milliseconds, `pid`
// answers this process's id (so a test can kill it), `fail` answers a JSON-RPC error.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

serveStdio(() => {
  const server = new McpServer(
    { name: "slow-tool", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Call pid before wait. Never wait longer than a minute." }
  );
  server.registerTool("wait", { description: "Answer after ms milliseconds.", inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: "text", text: `waited ${ms}` }] };
  });
  server.registerTool("pid", { description: "This server's process id.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: String(process.pid) }] }));
  server.registerTool("fail", { description: "Fails.", inputSchema: {} }, async () => ({ isError: true, content: [{ type: "text", text: "failed on purpose" }] }));
  return server;
});
