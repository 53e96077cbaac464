// conformance.mjs — a server with the tools, prompts and resources the official conformance suite
// (@modelcontextprotocol/conformance 0.1.16, `server` scenarios) asks for, written from each scenario's
// "Server Implementation Requirements". `node conformance.mjs stdio` (for a gateway), or
// `node conformance.mjs http [port]`: Streamable HTTP with sessions on 127.0.0.1 (port 0 = ephemeral),
// endpoint /mcp, printing `listening http://127.0.0.1:<port>/mcp`; Host and Origin must be local.
import http from "node:http";
import { randomUUID } from "node:crypto";
import {
  McpServer, PROTOCOL_VERSION_META_KEY, ResourceTemplate, WebStandardStreamableHTTPServerTransport, completable, fromJsonSchema,
  inputRequired, inputResponse,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// A 1x1 PNG and a 44-byte silent WAV, made here.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = Buffer.concat([
  Buffer.from("RIFF"), u32(36), Buffer.from("WAVEfmt "), u32(16), u16(1), u16(1), u32(8000), u32(8000), u16(1), u16(8),
  Buffer.from("data"), u32(0),
]).toString("base64");
function u32(n) { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; }
function u16(n) { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; }
const text = (t) => ({ content: [{ type: "text", text: t }] });

function tools(server) {
  const none = { inputSchema: {} };
  server.registerTool("test_simple_text", { description: "Answers one text block.", ...none }, async () =>
    text("This is a simple text response for testing."));
  server.registerTool("test_image_content", { description: "Answers an image.", ...none }, async () => ({
    content: [{ type: "image", data: PNG, mimeType: "image/png" }],
  }));
  server.registerTool("test_audio_content", { description: "Answers audio.", ...none }, async () => ({
    content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }],
  }));
  server.registerTool("test_embedded_resource", { description: "Answers an embedded resource.", ...none }, async () => ({
    content: [{ type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } }],
  }));
  server.registerTool("test_multiple_content_types", { description: "Answers text, an image and a resource.", ...none }, async () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      { type: "resource", resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: JSON.stringify({ test: "data", value: 123 }) } },
    ],
  }));
  server.registerTool("test_tool_with_logging", { description: "Logs three info messages while it runs.", ...none }, async (_args, ctx) => {
    await ctx.mcpReq.log("info", "Tool execution started");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool processing data");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool execution completed");
    return text("Logging done.");
  });
  server.registerTool("test_tool_with_progress", { description: "Reports progress 0, 50 and 100 of 100.", ...none }, async (_args, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
      if (progress < 100) await sleep(50);
    }
    return text("Progress done.");
  });
  server.registerTool("test_error_handling", { description: "Always fails.", ...none }, async () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));
  server.registerTool(
    "json_schema_2020_12_tool",
    {
      description: "Tool with JSON Schema 2020-12 features",
      // The schema as written: fromJsonSchema keeps every keyword.
      inputSchema: fromJsonSchema({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
        properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
        additionalProperties: false,
      }),
    },
    async () => text("Schema tool called.")
  );
  asking(server);
}

// On 2026-07-28 a server asks its client through an input-required result (the client answers in its
// retry's inputResponses); before, with a request of its own. These tools do both.
const modern = (ctx) => (ctx.mcpReq.envelope?.[PROTOCOL_VERSION_META_KEY] ?? "") >= "2026-07-28";

// The tools that ask the client: sampling and every elicitation shape the suite checks.
function asking(server) {
  server.registerTool("test_sampling", { description: "Asks the client's model.", inputSchema: { prompt: z.string() } }, async ({ prompt }, ctx) => {
    const params = { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 };
    let answer;
    if (modern(ctx)) {
      const got = inputResponse(ctx.mcpReq.inputResponses, "sample");
      if (got.kind !== "sampling") return inputRequired({ inputRequests: { sample: inputRequired.createMessage(params) }, requestState: "asked" });
      answer = got.result;
    } else {
      answer = await ctx.mcpReq.requestSampling(params);
    }
    const said = Array.isArray(answer.content) ? answer.content.map((c) => c.text ?? "").join("") : answer.content?.text ?? "";
    return text(`LLM response: ${said}`);
  });
  const elicit = async (ctx, message, properties, required) => {
    const params = { message, requestedSchema: { type: "object", properties, ...(required && { required }) } };
    let result;
    if (modern(ctx)) {
      const got = inputResponse(ctx.mcpReq.inputResponses, "ask");
      if (got.kind !== "elicit") return inputRequired({ inputRequests: { ask: inputRequired.elicit(params) } });
      result = got;
    } else {
      result = await ctx.mcpReq.elicitInput(params);
    }
    return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  };
  server.registerTool("test_elicitation", { description: "Asks the user for a name and an email.", inputSchema: { message: z.string() } }, async ({ message }, ctx) =>
    elicit(ctx, message, {
      username: { type: "string", description: "User's response" },
      email: { type: "string", description: "User's email address" },
    }, ["username", "email"]));
  server.registerTool("test_elicitation_sep1034_defaults", { description: "Asks with a default for each type.", inputSchema: {} }, async (_args, ctx) =>
    elicit(ctx, "Defaults for every primitive type", {
      name: { type: "string", default: "John Doe" },
      age: { type: "integer", default: 30 },
      score: { type: "number", default: 95.5 },
      status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
      verified: { type: "boolean", default: true },
    }));
  const titled = (prefix, word) => [1, 2, 3].map((n) => ({ const: `${prefix}${n}`, title: `${["First", "Second", "Third"][n - 1]} ${word}` }));
  server.registerTool("test_elicitation_sep1330_enums", { description: "Asks with every enum shape.", inputSchema: {} }, async (_args, ctx) =>
    elicit(ctx, "Every enum shape", {
      untitledSingle: { type: "string", enum: ["option1", "option2", "option3"] },
      titledSingle: { type: "string", oneOf: titled("value", "Option") },
      legacyEnum: { type: "string", enum: ["opt1", "opt2", "opt3"], enumNames: ["Option One", "Option Two", "Option Three"] },
      untitledMulti: { type: "array", items: { type: "string", enum: ["option1", "option2", "option3"] } },
      titledMulti: { type: "array", items: { anyOf: titled("value", "Choice") } },
    }));
}

function library(server) {
  server.registerResource("static text", "test://static-text", { description: "A text resource.", mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }],
  }));
  server.registerResource("static binary", "test://static-binary", { description: "A PNG.", mimeType: "image/png" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }],
  }));
  server.registerResource("watched", "test://watched-resource", { description: "A resource to subscribe to.", mimeType: "text/plain" }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched." }],
  }));
  server.registerResource("template data", new ResourceTemplate("test://template/{id}/data", { list: undefined }), { description: "Data by id.", mimeType: "application/json" }, async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
  }));
  const user = (content) => ({ role: "user", content });
  server.registerPrompt("test_simple_prompt", { description: "A prompt without arguments." }, async () => ({
    messages: [user({ type: "text", text: "This is a simple prompt for testing." })],
  }));
  const words = (v) => ["paris", "park", "party"].filter((w) => w.startsWith(v));
  server.registerPrompt(
    "test_prompt_with_arguments",
    { description: "A prompt with two arguments.", argsSchema: { arg1: completable(z.string().describe("First test argument"), words), arg2: z.string().describe("Second test argument") } },
    async ({ arg1, arg2 }) => ({ messages: [user({ type: "text", text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` })] })
  );
  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    { description: "A prompt embedding a resource.", argsSchema: { resourceUri: z.string().describe("URI of the resource to embed") } },
    async ({ resourceUri }) => ({
      messages: [
        user({ type: "resource", resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
        user({ type: "text", text: "Please process the embedded resource above." }),
      ],
    })
  );
  // A prompt and a resource that ask the client for a word first (2026-07-28: input-required).
  const askWord = async (ctx) => {
    const params = { message: "A word?", requestedSchema: { type: "object", properties: { word: { type: "string" } } } };
    if (!modern(ctx)) return { word: (await ctx.mcpReq.elicitInput(params)).content?.word };
    const got = inputResponse(ctx.mcpReq.inputResponses, "word");
    if (got.kind === "elicit") return { word: got.content?.word };
    return { asks: inputRequired({ inputRequests: { word: inputRequired.elicit(params) }, requestState: "word" }) };
  };
  server.registerPrompt("test_prompt_asking", { description: "Asks the client for a word, then says it." }, async (ctx) => {
    const { asks, word } = await askWord(ctx);
    return asks ?? { messages: [user({ type: "text", text: `The word: ${word}` })] };
  });
  server.registerResource("asking", "test://asking", { description: "Asks the client for a word.", mimeType: "text/plain" }, async (uri, ctx) => {
    const { asks, word } = await askWord(ctx);
    return asks ?? { contents: [{ uri: uri.href, mimeType: "text/plain", text: `The word: ${word}` }] };
  });
  server.registerPrompt("test_prompt_with_image", { description: "A prompt with an image." }, async () => ({
    messages: [user({ type: "image", data: PNG, mimeType: "image/png" }), user({ type: "text", text: "Please analyze the image above." })],
  }));
}

function make() {
  const server = new McpServer(
    { name: "conformance-upstream", version: "1.0.0" },
    { capabilities: { tools: {}, prompts: {}, resources: { subscribe: true }, completions: {}, logging: {} } }
  );
  server.server.setRequestHandler("resources/subscribe", async () => ({}));
  server.server.setRequestHandler("resources/unsubscribe", async () => ({}));
  tools(server);
  library(server);
  return server;
}

if (process.argv[2] === "http") {
  serveHttp(Number(process.argv[3] ?? 0));
} else {
  serveStdio(make);
}

function serveHttp(port) {
  const sessions = new Map();
  const local = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/;
  const server = http.createServer(async (req, res) => {
    const origin = req.headers.origin;
    if (!local.test(req.headers.host ?? "") || (origin && !local.test(origin.replace(/^https?:\/\//, "")))) {
      res.writeHead(403, { "content-type": "text/plain" }).end("forbidden host or origin\n");
      return;
    }
    if (new URL(req.url ?? "/", "http://127.0.0.1").pathname !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const body = req.method === "POST" ? Buffer.concat(chunks) : undefined;
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body, signal: abort.signal });
    let transport = sessions.get(req.headers["mcp-session-id"]);
    if (!transport) {
      if (req.headers["mcp-session-id"]) {
        res.writeHead(404, { "content-type": "text/plain" }).end("unknown session\n");
        return;
      }
      transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => sessions.set(id, transport),
        onsessionclosed: (id) => sessions.delete(id),
      });
      await make().connect(transport);
    }
    try {
      const response = await transport.handleRequest(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (error) {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  server.listen(port, "127.0.0.1", () => process.stdout.write(`listening http://127.0.0.1:${server.address().port}/mcp\n`));
}
