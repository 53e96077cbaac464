// skills.mjs — the Skills extension (io.modelcontextprotocol/skills, SEP-2640) on the SDK's own
// SkillsExtension (stdio): instructions that point at a skill URI, tool `refund`, and three skills served from
// memory, one per skills/list page (PAGE_SIZE, default 1), so a client must follow nextCursor. With HANG=1 it
// never answers skills/get nor its tool `wait` (a hung upstream).
import { McpServer } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { SkillsExtension, memorySkillFiles } from "@modelcontextprotocol/server/ext/skills";

const skill = (name, description, body) => `---\nname: ${name}\ndescription: ${description}\n---\n\n${body}\n`;
const files = {
  "refunds/SKILL.md": skill("refunds", "Process a customer refund per policy.",
    "# Refunds\n\nCheck the order with `refund` in dry-run mode first."),
  "refunds/references/POLICY.md": "Refunds over 100 EUR need a second approval.\n",
  "git-workflow/SKILL.md": skill("git-workflow", "Follow the team's branch and commit conventions.", "# Git workflow"),
  "reports/SKILL.md": skill("reports", "Assemble the daily report from live data.", "# Reports"),
};

const catalog = await SkillsExtension.load(memorySkillFiles(files), {
  pageSize: Number(process.env.PAGE_SIZE ?? 1),
  onWarning: (w) => console.error(`skills warning: ${JSON.stringify(w)}`),
});

serveStdio(() => {
  const server = new McpServer(
    { name: "skills-server", version: "1.0.0" },
    { capabilities: { tools: {}, resources: {} }, instructions: "Before any refund, read the skill skill://refunds/SKILL.md." }
  );
  server.registerTool("refund", { description: "Refund an order.", inputSchema: {} }, async () => ({ content: [{ type: "text", text: "refunded" }] }));
  catalog.attach(server);
  if (process.env.HANG === "1") {
    server.registerTool("wait", { description: "Never answers.", inputSchema: {} }, () => new Promise(() => {}));
    // The extension's own handler replaced by one that never answers.
    server.server._requestHandlers.set("skills/get", () => new Promise(() => {}));
  }
  return server;
});
