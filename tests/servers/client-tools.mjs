// client-tools.mjs — stdio, 2025 handshake (initialize): its tools depend on who asks, as real servers' do
// (server-everything registers get-roots-list only for clients with roots). Tools: `ping`; `client-<name>-<version>`
// from clientInfo; `has-<capability>` for each of roots, sampling, elicitation advertised; with roots, `root-<last
// path segment>` for each root the client answers to roots/list (tools/list waits for that answer).
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

serveStdio(() => {
  const server = new McpServer(
    { name: "client-tools", version: "1.0.0" },
    { capabilities: { tools: { listChanged: true } }, instructions: "Its tools are named after the client that asks." }
  );
  const tool = (name) =>
    server.registerTool(name.replace(/[^A-Za-z0-9_.-]/g, "_"), { description: `Tool ${name}.`, inputSchema: {} }, async () => ({
      content: [{ type: "text", text: name }],
    }));
  tool("ping");
  // Registered when tools/list comes (not during the handshake, which a
  // tools/list_changed notification would interrupt).
  const names = [];
  let roots = false;
  let answered = Promise.resolve();
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (message?.method === "initialize") {
        const { clientInfo, capabilities } = message.params ?? {};
        names.push(`client-${clientInfo?.name}-${clientInfo?.version}`);
        for (const c of ["roots", "sampling", "elicitation"]) if (capabilities?.[c]) names.push(`has-${c}`);
        roots = Boolean(capabilities?.roots);
      }
      if (message?.method === "notifications/initialized" && roots) {
        answered = server.server
          .listRoots()
          .then((r) => r.roots.forEach((root) => names.push(`root-${root.uri.split("/").filter(Boolean).pop()}`)))
          .catch(() => names.push("roots-failed"));
      }
      if (message?.method === "tools/list") {
        answered.then(() => {
          names.splice(0).forEach(tool);
          deliver?.(message, extra);
        });
        return;
      }
      deliver?.(message, extra);
    };
  };
  return server;
});
