// close.mjs — the official TypeScript SDK client's close sequence (stdin closed, SIGTERM 2 s later, SIGKILL 2 s
// after that) against a command. Usage: node close.mjs <command> <args…>. Prints one JSON line: the tools it
// listed and how long the close took (under 2,000 ms: the command ended on its stdin's end, with no signal).
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [command, ...args] = process.argv.slice(2);
const client = new Client({ name: "ts-close", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const tools = (await client.listTools()).tools.map((t) => t.name);
const start = performance.now();
await client.close();
console.log(JSON.stringify({ tools, close_ms: Math.round(performance.now() - start) }));
