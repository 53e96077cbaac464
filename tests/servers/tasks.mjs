// Raw JSON-RPC over stdio (no SDK), both eras. 2026-07-28 (`server/discover`): declares the Tasks
// extension (io.modelcontextprotocol/tasks); tool `start` answers a task handle (`resultType: "task"`,
// ids t1, t2, ... in every instance, so two instances' ids collide); `tasks/get` answers the task
// completed with the text `<PREFIX> <id> done` (after `tasks/update` with `{name: {content: {name}}}`:
// `<PREFIX> <id> done for <name>`), `tasks/cancel` marks it cancelled, an unknown id is -32602;
// tool `ask` answers input_required (an elicitation keyed `name`, requestState `<PREFIX>-state-<n>`)
// and, called again with that state and `inputResponses.name`, `<PREFIX> got <state> from <name>`
// (another state is -32602 naming it), and so do prompt `ask` and resource `ask://<PREFIX>`; tool `told` answers the clientCapabilities of its
// request's `_meta` as JSON. 2025-11-25 (`initialize`): tool `roots` asks the client `roots/list` and
// answers the URIs it got, one a line. `subscriptions/listen` with `notifications.taskIds` (the Tasks extension
// declared in its `_meta`, else -32003) is acknowledged and pushes each known task's state as `tasks/get` answers it
// (`notifications/tasks`, its `_meta` naming the subscription), then stays open. Every request is appended to stderr
// as `<PREFIX> <method>`.
import { createInterface } from "node:readline";

const PREFIX = process.env.PREFIX || "a";
const caps = "io.modelcontextprotocol/clientCapabilities";
const info = { name: `tasks-${PREFIX}`, version: "1.0.0" };
const tasks = new Map();
const states = new Set();
let modern = false;
let next = 1;
const waiting = new Map();

const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const modernResult = (result) =>
  modern ? { resultType: "complete", _meta: { "io.modelcontextprotocol/serverInfo": info }, ...result } : result;
const text = (t, isError = false) => modernResult({ content: [{ type: "text", text: t }], isError });
const stamp = "2026-01-01T00:00:00Z";
const task = (id) => ({ taskId: id, status: "working", createdAt: stamp, lastUpdatedAt: stamp, ttlMs: 60000, pollIntervalMs: 100 });

const tools = () =>
  (modern ? ["start", "ask", "told"] : ["roots"]).map((name) => ({
    name,
    description: `the ${name} tool`,
    inputSchema: { type: "object", properties: {} },
  }));

// An input-required round trip: the elicitation and a state first, then the answer `shape` makes.
function asked(params, shape) {
  const state = params.requestState;
  if (state === undefined) {
    const issued = `${PREFIX}-state-${states.size + 1}`;
    states.add(issued);
    const ask = { method: "elicitation/create", params: { mode: "form", message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } };
    return { resultType: "input_required", inputRequests: { name: ask }, requestState: issued };
  }
  if (!states.has(state)) throw { code: -32602, message: `${PREFIX} never issued ${state}` };
  return shape(`${PREFIX} got ${state} from ${params.inputResponses?.name?.content?.name}`);
}

async function call(params, meta) {
  switch (params.name) {
    case "start": {
      const id = `t${tasks.size + 1}`;
      tasks.set(id, { status: "working" });
      return { resultType: "task", ...task(id) };
    }
    case "ask":
      return asked(params, (t) => text(t));
    case "told":
      return text(JSON.stringify(meta?.[caps] ?? null));
    case "roots": {
      const id = `r${next++}`;
      const answered = new Promise((resolve) => waiting.set(id, resolve));
      send({ id, method: "roots/list", params: {} });
      const answer = await answered;
      if (answer.error) return text(`roots/list failed: ${answer.error.message}`, true);
      return text(answer.result.roots.map((r) => r.uri).join("\n"));
    }
    default:
      throw { code: -32602, message: `unknown tool ${params.name}` };
  }
}

function taskOf(id) {
  const t = tasks.get(id);
  if (!t) throw { code: -32602, message: `Failed to retrieve task: ${PREFIX} has no task ${id}` };
  return t;
}

// A task's state as `tasks/get` answers it.
function detailed(id) {
  const t = taskOf(id);
  if (t.status === "cancelled") return { ...task(id), status: "cancelled" };
  const done = `${PREFIX} ${id} done${t.name ? ` for ${t.name}` : ""}`;
  return { ...task(id), status: "completed", result: { content: [{ type: "text", text: done }], isError: false } };
}

async function handle(m) {
  const params = m.params || {};
  switch (m.method) {
    case "initialize":
      return { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: info };
    case "server/discover":
      modern = true;
      return modernResult({ supportedVersions: ["2026-07-28"], capabilities: { tools: {}, prompts: {}, resources: {}, extensions: { "io.modelcontextprotocol/tasks": {} } }, ttlMs: 0, cacheScope: "private" });
    case "prompts/list":
      return modernResult({ prompts: modern ? [{ name: "ask", description: "asks a name" }] : [] });
    case "prompts/get":
      return asked(params, (t) => modernResult({ messages: [{ role: "user", content: { type: "text", text: t } }] }));
    case "resources/list":
      return modernResult({ resources: modern ? [{ uri: `ask://${PREFIX}`, name: "ask" }] : [] });
    case "resources/templates/list":
      return modernResult({ resourceTemplates: [] });
    case "resources/read":
      return asked(params, (t) => modernResult({ contents: [{ uri: params.uri, text: t }] }));
    case "tools/list":
      return modernResult({ tools: tools() });
    case "tools/call":
      return call(params, params._meta);
    case "tasks/get":
      return modernResult(detailed(params.taskId));
    case "subscriptions/listen": {
      if (params._meta?.[caps]?.extensions?.["io.modelcontextprotocol/tasks"] === undefined) {
        throw { code: -32003, message: "Missing required client capability" };
      }
      const taskIds = (params.notifications?.taskIds ?? []).filter((id) => tasks.has(id));
      const meta = { "io.modelcontextprotocol/subscriptionId": m.id };
      send({ method: "notifications/subscriptions/acknowledged", params: { _meta: meta, notifications: { taskIds } } });
      for (const id of taskIds) send({ method: "notifications/tasks", params: { _meta: meta, ...detailed(id) } });
      return new Promise(() => {});
    }
    case "tasks/update":
      taskOf(params.taskId).name = params.inputResponses?.name?.content?.name;
      return { resultType: "complete" };
    case "tasks/cancel":
      taskOf(params.taskId).status = "cancelled";
      return { resultType: "complete" };
    case "ping":
      return modernResult({});
    default:
      throw { code: -32601, message: `method not found: ${m.method}` };
  }
}

createInterface({ input: process.stdin }).on("line", async (line) => {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    return;
  }
  if (m.method === undefined && waiting.has(m.id)) {
    waiting.get(m.id)(m);
    waiting.delete(m.id);
    return;
  }
  if (m.id === undefined) return;
  process.stderr.write(`${PREFIX} ${m.method}\n`);
  try {
    send({ id: m.id, result: await handle(m) });
  } catch (e) {
    send({ id: m.id, error: { code: e.code ?? -32603, message: e.message ?? String(e) } });
  }
});
process.stdin.on("end", () => process.exit(0));
