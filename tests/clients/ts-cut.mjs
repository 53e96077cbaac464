// ts-cut.mjs — the official TypeScript SDK client (@modelcontextprotocol/client) on a call the gateway does not
// finish: a drain that cuts it, or the replica that ran it gone (the SDK then resumes the stream, Last-Event-ID,
// wherever the URL leads now).
// Usage: node ts-cut.mjs <url> <tool> <ms> <deadline seconds>. Prints `calling` once the session is open and the call
// goes out, then one JSON line: the call's text or its error, and the seconds it took.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, tool, ms, deadline] = process.argv.slice(2);
const client = new Client({ name: "ts-cut", version: "1.0.0" }, { versionNegotiation: { mode: "legacy" } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
console.log("calling");
const start = performance.now();
const out = {};
try {
  const r = await client.callTool({ name: tool, arguments: { ms: Number(ms) } }, { timeout: Number(deadline) * 1000 });
  out.text = r.content.map((c) => c.text).join("");
} catch (e) {
  out.error = String(e.message ?? e);
}
out.seconds = Math.round(performance.now() - start) / 1000;
console.log(JSON.stringify(out));
process.exit(0);
