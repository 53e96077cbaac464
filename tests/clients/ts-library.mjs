// ts-library.mjs — the official TypeScript SDK client against `mcp-preamble serve` in front of two library.mjs
// servers (tests/servers), for prompts and resources through the gateway.
// Usage: node ts-library.mjs <legacy|modern> <spec.json>; spec: {command, args, prompt, arguments, reads: [uri…]}.
// Prints one JSON line: era, the server capabilities, the prompt names, the prompt's messages' text, the resource
// URIs, the template URIs, and each read's text (or error).
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [era, specPath] = process.argv.slice(2);
const spec = JSON.parse(readFileSync(specPath, "utf8"));
const client = new Client(
  { name: "ts-sdk-library", version: "1.0.0" },
  { versionNegotiation: { mode: era === "modern" ? { pin: "2026-07-28" } : "legacy" } }
);
const timer = setTimeout(() => {
  console.log(JSON.stringify({ timeout: true }));
  process.exit(1);
}, 30000);
await client.connect(new StdioClientTransport({ command: spec.command, args: spec.args, stderr: "ignore" }));
const out = { era: client.getProtocolEra(), capabilities: client.getServerCapabilities() };
// The gateway answers a list within 900 ms from what it knows and announces a late upstream with
// list_changed (issue 51): as a host would, list again until both upstreams' prompts are there (at most 10 s).
const listed = async () => (await client.listPrompts()).prompts.map((p) => p.name);
out.prompts = await listed();
for (let i = 0; i < 40 && out.prompts.length < 2; i++) {
  await new Promise((done) => setTimeout(done, 250));
  out.prompts = await listed();
}
const got = await client.getPrompt({ name: spec.prompt, arguments: spec.arguments });
out.messages = got.messages.map((m) => m.content.text);
out.resources = (await client.listResources()).resources.map((r) => r.uri);
out.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
out.reads = {};
for (const uri of spec.reads) {
  try {
    out.reads[uri] = { text: (await client.readResource({ uri })).contents.map((c) => c.text).join("") };
  } catch (e) {
    out.reads[uri] = { error: String(e.message ?? e) };
  }
}
clearTimeout(timer);
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
