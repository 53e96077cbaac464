// library.mjs — stdio server with prompts and resources, for the gateway's resource and prompt routing.
//
// Environment:
//   PREFIX   tells two instances apart (default "lib"): the prompt `<PREFIX>_brief` (argument `topic`, with
//            completion), the resource `book://<PREFIX>/guide`, the template `book://<PREFIX>/chapters/{n}`
//            (completion of `n`: 1, 2, 3), and text that names PREFIX in every answer
//   SHARED   when set, the resource `book://shared/index` is listed too (two instances with it collide)
//
// Tools (reachable through a gateway): `touch` sends notifications/resources/updated for `uri`; `grow` adds the
// prompt `<PREFIX>_extra` and the resource `book://<PREFIX>/extra` (prompts and resources list_changed); `pid`
// answers the process id (so a test can kill it).
// Subscriptions: `resources/subscribe` / `unsubscribe` (2025 era) are answered with `{}`, and `touch` sends the
// update as is; on 2026-07-28 connections the SDK's listen router delivers it only to `subscriptions/listen`
// subscribers of the URI.
import { McpServer, ResourceTemplate, completable } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";

const prefix = process.env.PREFIX ?? "lib";

serveStdio(() => {
  const server = new McpServer(
    { name: `library-${prefix}`, version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        prompts: { listChanged: true },
        resources: { listChanged: true, subscribe: true },
        completions: {},
      },
      instructions: `The ${prefix} library: read book://${prefix}/guide first.`,
    }
  );
  server.server.setRequestHandler("resources/subscribe", async () => ({}));
  server.server.setRequestHandler("resources/unsubscribe", async () => ({}));
  server.registerPrompt(
    `${prefix}_brief`,
    {
      title: `Brief (${prefix})`,
      description: `A brief from the ${prefix} library.`,
      argsSchema: { topic: completable(z.string().describe("What the brief is about."), (v) => ["alpha", "beta"].filter((t) => t.startsWith(v))) },
    },
    async ({ topic }) => ({
      description: `${prefix} brief`,
      messages: [{ role: "user", content: { type: "text", text: `${prefix} brief on ${topic}` } }],
    })
  );
  server.registerResource(
    `${prefix} guide`,
    `book://${prefix}/guide`,
    { title: `Guide (${prefix})`, description: `How to use the ${prefix} library.`, mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: `${prefix} guide text` }] })
  );
  if (process.env.SHARED !== undefined) {
    server.registerResource("shared index", "book://shared/index", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: `${prefix} index` }],
    }));
  }
  const chapters = new ResourceTemplate(`book://${prefix}/chapters/{n}`, {
    list: undefined,
    complete: { n: (v) => ["1", "2", "3"].filter((n) => n.startsWith(v)) },
  });
  server.registerResource(`${prefix} chapter`, chapters, { description: `A chapter of the ${prefix} book.` }, async (uri, { n }) => ({
    contents: [{ uri: uri.href, text: `${prefix} chapter ${n}` }],
  }));
  server.registerTool("touch", { description: "Tell subscribers a resource changed.", inputSchema: { uri: z.string() } }, async ({ uri }) => {
    await server.server.sendResourceUpdated({ uri });
    return { content: [{ type: "text", text: `touched ${uri}` }] };
  });
  server.registerTool("pid", { description: "This process's id.", inputSchema: {} }, async () => ({
    content: [{ type: "text", text: String(process.pid) }],
  }));
  server.registerTool("grow", { description: "Add a prompt and a resource.", inputSchema: {} }, async () => {
    server.registerPrompt(`${prefix}_extra`, { description: "Added later." }, async () => ({
      messages: [{ role: "user", content: { type: "text", text: `${prefix} extra` } }],
    }));
    server.registerResource(`${prefix} extra`, `book://${prefix}/extra`, {}, async (uri) => ({ contents: [{ uri: uri.href, text: "extra" }] }));
    return { content: [{ type: "text", text: "grown" }] };
  });
  return server;
});
