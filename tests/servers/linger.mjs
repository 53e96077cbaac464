// linger.mjs — a server that does not end when its stdin closes, and starts a process of its own (as `npx` starts
// `node`): raw JSON-RPC, 2025 handshake, one tool `ping`. Writes "<its pid> <its child's pid>" to PID_FILE
// (PID_APPEND=1: adds it).
// HANG=1: never answers (a server still starting). STUBBORN=1: it and its child ignore SIGTERM (only SIGKILL ends them).
// LISTS=1: also prompts (`brief`), resources (`linger://NAME/a`, NAME from LIST_NAME) and no templates, answered
// LIST_DELAY_MS late (-1: never).
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";

const stubborn = process.env.STUBBORN === "1";
const keep = `${stubborn ? "process.on('SIGTERM', () => {});" : ""} setInterval(() => {}, 1 << 30);`;
const child = spawn(process.execPath, ["-e", keep], { stdio: "ignore" });
if (stubborn) process.on("SIGTERM", () => {});
// PID_APPEND=1: each process of this server adds its line (a gateway may start it more than once).
(process.env.PID_APPEND === "1" ? appendFileSync : writeFileSync)(process.env.PID_FILE, `${process.pid} ${child.pid}\n`);
setInterval(() => {}, 1 << 30);

let buffer = "";
process.stdin.on("data", (chunk) => {
  buffer += chunk;
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (process.env.HANG === "1" || !line.trim()) continue;
    const message = JSON.parse(line);
    if (message.id === undefined) continue;
    const lists = {
      "prompts/list": { prompts: [{ name: "brief", description: "A brief." }] },
      "resources/list": { resources: [{ uri: `linger://${process.env.LIST_NAME}/a`, name: "a" }] },
      "resources/templates/list": { resourceTemplates: [] },
    };
    if (process.env.LISTS === "1" && lists[message.method]) {
      const delay = Number(process.env.LIST_DELAY_MS || "0");
      const reply = JSON.stringify({ jsonrpc: "2.0", id: message.id, result: lists[message.method] }) + "\n";
      if (delay >= 0) setTimeout(() => process.stdout.write(reply), delay);
      continue;
    }
    const result =
      message.method === "initialize"
        ? {
            protocolVersion: "2025-06-18",
            capabilities: process.env.LISTS === "1" ? { tools: {}, prompts: {}, resources: {} } : { tools: {} },
            serverInfo: { name: "linger", version: "1.0.0" },
            instructions: "Call ping first.",
          }
        : message.method === "tools/list"
          ? { tools: [{ name: "ping", description: "Answers pong.", inputSchema: { type: "object" } }] }
          : message.method === "tools/call"
            ? { content: [{ type: "text", text: "pong" }] }
            : null;
    const reply = result
      ? { jsonrpc: "2.0", id: message.id, result }
      : { jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } };
    process.stdout.write(JSON.stringify(reply) + "\n");
  }
});
// Stdin's end changes nothing: only a signal ends this server.
process.stdin.on("end", () => {});
