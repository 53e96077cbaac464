// invoice.mjs — the seed MCP server (stdio): instructions plus two tools, list_periods and get_invoice.
// INSTRUCTIONS_FILE, when set: the instructions are read from that file at each connection (a server whose text
// changes between runs, for the pin tests).
import { readFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const SEED = "Always call list_periods before get_invoice. Invoice IDs are period scoped and are not stable across periods.";

serveStdio(() => {
  const file = process.env.INSTRUCTIONS_FILE;
  const server = new McpServer(
    { name: "invoice-server", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: file ? readFileSync(file, "utf8") : SEED }
  );
  server.registerTool("list_periods", { description: "List billing periods.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "2026-07, 2026-08" }] }));
  server.registerTool("get_invoice", { description: "Get an invoice by id.", inputSchema: { id: z.string() } }, async ({ id }) => ({ content: [{ type: "text", text: `invoice ${id}` }] }));
  return server;
});
