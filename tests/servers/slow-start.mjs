// slow-start.mjs — the invoice server after SILENT_MS (default 3000) of silence: until then it reads nothing and
// writes nothing (requests wait in the pipe), like a Python server importing its dependencies.
//   ERA=both (default)  the SDK answers either handshake
//   ERA=legacy          server/discover is answered -32601, as a 2025-only server does
//   ERA=modern          initialize is answered -32601, as a 2026-07-28-only server does
//   SPAWN_LOG           when set, one line is appended to this file per start
import { appendFileSync } from "node:fs";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { invoiceServer } from "./invoice-factory.mjs";

if (process.env.SPAWN_LOG) appendFileSync(process.env.SPAWN_LOG, "spawn\n");
const refused = { legacy: "server/discover", modern: "initialize" }[process.env.ERA ?? "both"];
await new Promise((resolve) => setTimeout(resolve, Number(process.env.SILENT_MS ?? 3000)));

serveStdio(() => {
  const server = invoiceServer();
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    await connect(transport);
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (refused && message?.method === refused && message.id !== undefined) {
        transport.send({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: `Method not found: ${refused}` } });
        return;
      }
      deliver?.(message, extra);
    };
  };
  return server;
});
