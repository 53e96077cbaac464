// client-echo.mjs — stdio; tool `whoami` answers, as JSON, every clientInfo name this server saw (from initialize,
// and from the _meta envelope of each 2026-07-28 request) and the last client capabilities. Tool `later` is
// registered ADD_AFTER_MS (default 500) after the first tools/list (after the first call of `whoami` with
// ADD_AFTER=whoami: a client that has called it is connected, however long it took to start), so the SDK sends
// notifications/tools/list_changed.
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { onMessage } from "./on-message.mjs";

const ENVELOPE = "io.modelcontextprotocol/";

serveStdio(() => {
  const seen = { names: [], capabilities: null };
  const server = new McpServer(
    { name: "client-echo", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } }, instructions: "Call whoami to see which client is asking." }
  );
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  server.registerTool("whoami", { description: "The clients this server saw.", inputSchema: {} }, async () => text(JSON.stringify(seen)));
  let armed = false;
  onMessage(server, (message) => {
    const params = message?.params ?? {};
    const initialize = message?.method === "initialize";
    const info = initialize ? params.clientInfo : params._meta?.[`${ENVELOPE}clientInfo`];
    const capabilities = initialize ? params.capabilities : params._meta?.[`${ENVELOPE}clientCapabilities`];
    if (info?.name && !seen.names.includes(info.name)) seen.names.push(info.name);
    if (capabilities) seen.capabilities = capabilities;
    const trigger = process.env.ADD_AFTER === "whoami"
      ? message?.method === "tools/call" && params.name === "whoami"
      : message?.method === "tools/list";
    if (!armed && trigger) {
      armed = true;
      setTimeout(() => {
        server.registerTool("later", { description: "Added after the first tools/list.", inputSchema: {} }, async () => text("later"));
      }, Number(process.env.ADD_AFTER_MS ?? 500)).unref();
    }
  });
  return server;
});
