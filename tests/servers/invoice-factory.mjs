// invoice-factory.mjs — the invoice server of invoice.mjs as an importable factory (used by noisy-stdout.mjs and http.mjs).
// TOTALS=1 adds the tool `totals`, with an outputSchema, answering structuredContent {total: 42}.
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

// A factory, not an instance: serveStdio calls it once per connection, createMcpHandler once per HTTP request.
export function invoiceServer() {
  const server = new McpServer(
    { name: "invoice-server", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Always call list_periods before get_invoice. Invoice IDs are period scoped and are not stable across periods." }
  );
  server.registerTool("list_periods", { description: "List billing periods.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "2026-07, 2026-08" }] }));
  server.registerTool("get_invoice", { description: "Get an invoice by id.", inputSchema: { id: z.string() } }, async ({ id }) => ({ content: [{ type: "text", text: `invoice ${id}` }] }));
  if (process.env.TOTALS) {
    const outputSchema = { total: z.number().describe("The total, in cents.") };
    server.registerTool("totals", { description: "Totals of a period.", inputSchema: {}, outputSchema }, async () => ({
      content: [{ type: "text", text: '{"total":42}' }],
      structuredContent: { total: 42 },
    }));
  }
  return server;
}
