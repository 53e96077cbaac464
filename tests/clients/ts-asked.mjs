// ts-asked.mjs — the official TypeScript SDK client, in its default mode over Streamable HTTP, declaring
// `sampling` or nothing, calling one tool of an upstream that asks its client for a sample.
// Usage: node ts-asked.mjs <url> <sampling|none> <tool>. Prints one JSON line: the call's text and isError
// (or its error), and the sampling requests this client was sent.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, declared, tool] = process.argv.slice(2);
const capabilities = declared === "sampling" ? { sampling: {} } : {};
const client = new Client({ name: `asked-${declared}`, version: "1.0.0" }, { capabilities });
const out = { sampled: [] };
if (declared === "sampling") {
  client.setRequestHandler("sampling/createMessage", async (request) => {
    out.sampled.push(request.params.messages.at(-1).content.text);
    return { model: "m", role: "assistant", content: { type: "text", text: `sampled by ${declared}` } };
  });
}
const timer = setTimeout(() => {
  out.timeout = true;
  console.log(JSON.stringify(out));
  process.exit(1);
}, 30000);
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
try {
  const r = await client.callTool({ name: tool, arguments: { prompt: `from ${declared}` } });
  out.text = r.content.map((c) => c.text).join("");
  out.isError = Boolean(r.isError);
} catch (e) {
  out.error = String(e.message ?? e);
}
clearTimeout(timer);
console.log(JSON.stringify(out));
await client.close();
process.exit(0);
