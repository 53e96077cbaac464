// invoice-growing.mjs — the seed's invoice server that adds a `pay_invoice` tool GROW_AFTER_MS (default 1500 ms)
// after its first tools/list, so the SDK sends notifications/tools/list_changed (used by examples/agent_loop.rs).
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { invoiceServer } from "./invoice-factory.mjs";
import { onMessage } from "./on-message.mjs";

serveStdio(() => {
  const server = invoiceServer();
  let armed = false;
  onMessage(server, (message) => {
    if (!armed && message?.method === "tools/list") {
      armed = true;
      setTimeout(() => {
        server.registerTool(
          "pay_invoice",
          { description: "Pay an invoice by id.", inputSchema: { id: z.string() } },
          async ({ id }) => ({ content: [{ type: "text", text: `paid ${id}` }] })
        );
      }, Number(process.env.GROW_AFTER_MS ?? 1500)).unref();
    }
  });
  return server;
});
