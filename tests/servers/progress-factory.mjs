// progress-factory.mjs — the server of progress.mjs as an importable factory (progress.mjs over stdio, http.mjs over
// HTTP with `progress` as its second argument). The count of cancelled calls is the process's, shared by every instance.
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let cancelled = 0;

export function progressServer() {
  const server = new McpServer(
    { name: "progress", version: "1.0.0" },
    { capabilities: { tools: {} }, instructions: "Call steps for a long job." }
  );
  const progress = (params) => server.server.notification({ method: "notifications/progress", params });
  server.registerTool(
    "steps",
    {
      description: "Reports n steps of progress, then answers.",
      inputSchema: { n: z.number(), gap_ms: z.number().optional(), label: z.string().optional(), late: z.boolean().optional() },
    },
    async ({ n, gap_ms = 20, label = "job", late = false }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      if (token === undefined) return { content: [{ type: "text", text: `${label} done (no progress token)` }] };
      for (let i = 1; i <= n; i++) {
        if (ctx.mcpReq.signal.aborted) {
          cancelled += 1;
          return { content: [{ type: "text", text: `${label} cancelled` }] };
        }
        await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress: i, total: n, message: `${label} ${i}/${n}` } });
        await sleep(gap_ms);
      }
      if (late) setTimeout(() => progress({ progressToken: token, progress: n + 1, total: n, message: `${label} late` }).catch(() => {}), 100);
      return { content: [{ type: "text", text: `${label} done` }] };
    }
  );
  server.registerTool("cancelled", { description: "How many steps calls were cancelled.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: String(cancelled) }] }));
  server.registerTool("stray", { description: "Reports progress under tokens it was not given.", inputSchema: { n: z.number() } }, async ({ n }) => {
    for (let t = 0; t < n; t++) await progress({ progressToken: t, progress: 1, message: "stray" });
    return { content: [{ type: "text", text: "stray done" }] };
  });
  return server;
}
