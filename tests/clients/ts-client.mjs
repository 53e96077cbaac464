// ts-client.mjs — the official TypeScript SDK client (@modelcontextprotocol/client) against `mcp-preamble serve`.
// Usage: node ts-client.mjs <legacy|modern> <spec.json>; spec: {command, args, calls: [tool…], waitFor: tool,
// progress: {name, arguments}}, or {url, …} for a gateway already serving Streamable HTTP there.
// Prints one JSON line: era, instructions, tools (and their output schemas), each call's text and structured content (or error), the progress call's answer and the
// progress it saw (`onprogress`), and the tools after the list changed.
import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [era, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
let changed;
const sawChange = new Promise((resolve) => (changed = resolve));
const client = new Client(
  { name: "ts-sdk-test", version: "1.0.0" },
  {
    // "legacy" is the SDK's default mode: no option at all.
    ...(era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {}),
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
const transport = spec.url
  ? new StreamableHTTPClientTransport(new URL(spec.url))
  : new StdioClientTransport({ command: spec.command, args: spec.args, stderr: "ignore" });
await client.connect(transport);
out.era = client.getProtocolEra();
out.instructions = client.getInstructions();
const listed = (await client.listTools()).tools;
out.tools = listed.map((t) => t.name);
out.outputSchemas = Object.fromEntries(listed.filter((t) => t.outputSchema).map((t) => [t.name, t.outputSchema]));
out.calls = {};
for (const name of spec.calls) {
  try {
    const r = await client.callTool({ name, arguments: {} });
    const text = r.content.map((c) => c.text).join("");
    out.calls[name] = { text, isError: Boolean(r.isError), structured: r.structuredContent ?? null };
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
