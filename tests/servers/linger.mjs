// linger.mjs — a server that does not end when its stdin closes, and starts a process of its own (as `npx` starts
// `node`): raw JSON-RPC, 2025 handshake, one tool `ping`. Writes "<its pid> <its child's pid>" to PID_FILE.
// HANG=1: never answers (a server still starting). STUBBORN=1: it and its child ignore SIGTERM (only SIGKILL ends them).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";

const stubborn = process.env.STUBBORN === "1";
const keep = `${stubborn ? "process.on('SIGTERM', () => {});" : ""} setInterval(() => {}, 1 << 30);`;
const child = spawn(process.execPath, ["-e", keep], { stdio: "ignore" });
if (stubborn) process.on("SIGTERM", () => {});
writeFileSync(process.env.PID_FILE, `${process.pid} ${child.pid}\n`);
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
    const result =
      message.method === "initialize"
        ? {
            protocolVersion: "2025-06-18",
            capabilities: { tools: {} },
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
