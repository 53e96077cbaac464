// invoice.mjs — the seed MCP server (stdio): instructions plus two tools, list_periods and get_invoice.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
serveStdio(() => {
  const server = new McpServer(
    { name: "invoice-server", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Always call list_periods before get_invoice. Invoice IDs are period scoped and are not stable across periods." }
  );
  server.registerTool("list_periods", { description: "List billing periods.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "2026-07, 2026-08" }] }));
  server.registerTool("get_invoice", { description: "Get an invoice by id.", inputSchema: { id: z.string() } }, async ({ id }) => ({ content: [{ type: "text", text: `invoice ${id}` }] }));
  return server;
});
