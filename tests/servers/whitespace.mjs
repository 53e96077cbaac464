// whitespace.mjs — stdio server whose instructions are three spaces (blank but non-empty), with tools ping and echo.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
serveStdio(() => {
  // Note: the SDK only omits instructions when the string is falsy (""), so "   " is sent as-is.
  const server = new McpServer({ name: "whitespace-server", version: "1.0.0" }, { capabilities: { tools: {} }, instructions: "   " });
  server.registerTool("ping", { description: "Reply with pong.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "pong" }] }));
  server.registerTool("echo", { description: "Echo the given text.", inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: "text", text }] }));
  return server;
});
