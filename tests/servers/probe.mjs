// probe.mjs — raw JSON-RPC driver that shows, line by line, what a test server in this directory does on the wire.
//
//   node probe.mjs <server.mjs> [legacy|modern|both] [--changes]   stdio: spawn, send raw lines, print traffic
//   node probe.mjs --http [server.mjs]                              Streamable HTTP: spawn, POST with fetch()
//
// stdio, legacy (2025):  initialize {protocolVersion "2025-11-25"}, notifications/initialized, tools/list
// stdio, modern (2026):  server/discover with the _meta envelope, tools/list (also with the envelope)
// --changes:             modern also opens subscriptions/listen {toolsListChanged}; both eras then wait 1.5 s
//                        for notifications and call tools/list again (for changing.mjs)
// Each era runs on a fresh process. Output: ">>" sent, "<<" stdout lines, "!!" stderr lines, "##" events.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const clientInfo = { name: "wire", version: "1.0.0" };
const envelope = (extra = {}) => ({
  _meta: {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": clientInfo,
    "io.modelcontextprotocol/clientCapabilities": {},
  },
  ...extra,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- stdio ----------------------------------------------------------------------------------------------

function spawnServer(script, args = []) {
  const child = spawn(process.execPath, [resolve(here, script), ...args], { cwd: here, env: process.env, stdio: ["pipe", "pipe", "pipe"] });
  const waiters = new Map(); // id -> resolve
  const lines = [];
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk) => {
    out += chunk;
    let nl;
    while ((nl = out.indexOf("\n")) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      console.log(`<< ${line}`);
      lines.push(line);
      try {
        const msg = JSON.parse(line);
        if (msg.id !== undefined && (msg.result !== undefined || msg.error !== undefined)) waiters.get(msg.id)?.(msg);
      } catch {
        console.log("## (stdout line above is not JSON)");
      }
    }
  });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => chunk.split("\n").filter(Boolean).forEach((l) => console.log(`!! ${l}`)));
  const exited = once(child, "exit").then(([code, signal]) => {
    console.log(`## exited code=${code} signal=${signal}`);
    return { code, signal };
  });
  let dead = false;
  exited.then(() => (dead = true));

  const send = (msg) => {
    const line = JSON.stringify(msg);
    console.log(`>> ${line}`);
    if (!dead) child.stdin.write(line + "\n");
  };
  const request = (id, method, params, timeoutMs = 3000) =>
    new Promise((res) => {
      const timer = setTimeout(() => {
        waiters.delete(id);
        console.log(`## no response to id ${id} (${method}) within ${timeoutMs} ms`);
        res(undefined);
      }, timeoutMs);
      waiters.set(id, (msg) => (clearTimeout(timer), waiters.delete(id), res(msg)));
      exited.then(() => (clearTimeout(timer), res(undefined)));
      send({ jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) });
    });
  const finish = async () => {
    if (!dead) {
      child.stdin.end();
      const timer = setTimeout(() => { console.log("## still alive 2 s after stdin EOF; killing"); child.kill("SIGKILL"); }, 2000);
      await exited;
      clearTimeout(timer);
    }
    return exited;
  };
  return { child, send, request, finish, exited, isDead: () => dead };
}

async function stdioLegacy(script, changes) {
  console.log(`\n==== ${script}: 2025 handshake (initialize) ====`);
  const s = spawnServer(script);
  const init = await s.request(1, "initialize", { protocolVersion: LEGACY, capabilities: {}, clientInfo });
  if (init && !s.isDead()) {
    s.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await s.request(2, "tools/list", {});
    if (changes) {
      console.log("## waiting 1.5 s for notifications");
      await sleep(1500);
      await s.request(3, "tools/list", {});
    }
  }
  await s.finish();
}

async function stdioModern(script, changes) {
  console.log(`\n==== ${script}: 2026-07-28 handshake (server/discover) ====`);
  const s = spawnServer(script);
  const disc = await s.request(1, "server/discover", envelope());
  if (disc && !s.isDead()) {
    if (changes) {
      // A listen request is answered by notifications/subscriptions/acknowledged (no result until teardown).
      s.send({ jsonrpc: "2.0", id: 10, method: "subscriptions/listen", params: envelope({ notifications: { toolsListChanged: true } }) });
    }
    await s.request(2, "tools/list", envelope());
    if (changes) {
      console.log("## waiting 1.5 s for notifications");
      await sleep(1500);
      await s.request(3, "tools/list", envelope());
    }
  }
  await s.finish();
}

// ---- Streamable HTTP -------------------------------------------------------------------------------------

async function httpProbe(script) {
  console.log(`\n==== ${script}: Streamable HTTP ====`);
  const child = spawn(process.execPath, [resolve(here, script)], { cwd: here, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (c) => c.split("\n").filter(Boolean).forEach((l) => console.log(`!! ${l}`)));
  child.stdout.setEncoding("utf8");
  let first = "";
  for await (const chunk of child.stdout) {
    first += chunk;
    if (first.includes("\n")) break;
  }
  const line = first.split("\n")[0];
  console.log(`<< ${line}`);
  const url = line.match(/^listening (http:\/\/\S+)$/)?.[1];
  if (!url) throw new Error("no listening line");
  child.stdout.on("data", (c) => console.log(`<< (late stdout) ${c.trimEnd()}`));

  const post = async (label, body, extraHeaders = {}) => {
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", ...extraHeaders };
    console.log(`\n-- ${label}\n>> POST ${url} ${JSON.stringify(extraHeaders)} ${JSON.stringify(body)}`);
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body) });
    const interesting = ["content-type", "mcp-session-id", "mcp-protocol-version"].map((h) => [h, res.headers.get(h)]).filter(([, v]) => v !== null);
    console.log(`<< ${res.status} ${JSON.stringify(Object.fromEntries(interesting))}`);
    const text = await res.text();
    if (text) console.log(`<< ${text.trimEnd()}`);
    return res;
  };

  // 2025 era: stateless legacy serving.
  await post("initialize (2025)", { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: LEGACY, capabilities: {}, clientInfo } });
  await post("notifications/initialized (2025)", { jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-protocol-version": LEGACY });
  await post("tools/list (2025)", { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }, { "mcp-protocol-version": LEGACY });
  // 2026-07-28 era: every request carries the envelope AND the MCP-Protocol-Version + Mcp-Method headers.
  await post("server/discover without MCP-Protocol-Version / Mcp-Method headers", { jsonrpc: "2.0", id: 3, method: "server/discover", params: envelope() });
  await post("server/discover (2026)", { jsonrpc: "2.0", id: 4, method: "server/discover", params: envelope() }, { "mcp-protocol-version": MODERN, "mcp-method": "server/discover" });
  await post("tools/list (2026)", { jsonrpc: "2.0", id: 5, method: "tools/list", params: envelope() }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" });
  await post("tools/call get_invoice (2026; Mcp-Name header required)", { jsonrpc: "2.0", id: 6, method: "tools/call", params: envelope({ name: "get_invoice", arguments: { id: "A-1" } }) }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "get_invoice" });
  child.kill("SIGTERM");
  const [code, signal] = await once(child, "exit");
  console.log(`## exited code=${code} signal=${signal}`);
}

// ---- main ------------------------------------------------------------------------------------------------

const args = process.argv.slice(2);
if (args[0] === "--http") {
  await httpProbe(args[1] ?? "http.mjs");
} else {
  const script = args[0];
  if (!script) {
    console.error("usage: node probe.mjs <server.mjs> [legacy|modern|both] [--changes] | node probe.mjs --http [server.mjs]");
    process.exit(2);
  }
  const era = args.find((a) => ["legacy", "modern", "both"].includes(a)) ?? "both";
  const changes = args.includes("--changes");
  if (era !== "modern") await stdioLegacy(script, changes);
  if (era !== "legacy") await stdioModern(script, changes);
}
