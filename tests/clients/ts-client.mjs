// ts-client.mjs — the official TypeScript SDK client (@modelcontextprotocol/client) against `mcp-preamble serve`.
// Usage: node ts-client.mjs <legacy|modern> <spec.json>; spec: {command, args, calls: [tool…], waitFor: tool,
// progress: {name, arguments}}.
// Prints one JSON line: era, instructions, tools, each call's text (or error), the progress call's answer and the
// progress it saw (`onprogress`), and the tools after the list changed.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [era, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
let changed;
const sawChange = new Promise((resolve) => (changed = resolve));
const client = new Client(
  { name: "ts-sdk-test", version: "1.0.0" },
  {
    versionNegotiation: { mode: era === "modern" ? { pin: "2026-07-28" } : "legacy" },
    listChanged: {
      tools: {
        onChanged: (error, tools) => {
          if (!error && tools.some((t) => t.name === spec.waitFor)) changed(tools.map((t) => t.name));
        },
      },
    },
  }
);
const out = {};
const timer = setTimeout(() => {
  out.timeout = true;
  console.log(JSON.stringify(out));
  process.exit(1);
}, 30000);
await client.connect(new StdioClientTransport({ command: spec.command, args: spec.args, stderr: "ignore" }));
out.era = client.getProtocolEra();
out.instructions = client.getInstructions();
out.tools = (await client.listTools()).tools.map((t) => t.name);
out.calls = {};
for (const name of spec.calls) {
  try {
    const r = await client.callTool({ name, arguments: {} });
    out.calls[name] = { text: r.content.map((c) => c.text).join(""), isError: Boolean(r.isError) };
  } catch (e) {
    out.calls[name] = { error: String(e.message ?? e) };
  }
}
out.changed = await sawChange;
if (spec.progress) {
  const seen = [];
  const r = await client.callTool(spec.progress, { onprogress: (p) => seen.push(p) });
  out.progress = { text: r.content.map((c) => c.text).join(""), seen };
}
clearTimeout(timer);
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
