'use strict'
// Every server of an MCP client config, connected with the official client
// (`@modelcontextprotocol/client` 2.x, else `@modelcontextprotocol/sdk` 1.x)
// and followed by one LiveSection: Python's `connect_config`. The config is
// read by the crate, as `mcp-preamble preview --config` reads it.

const { Assembler, McpPreambleError, _fromNative: fromNative } = require('./core.js')
const native = require('./native.js')
const { LiveSection } = require('./session.js')
const { usage } = require('./sdk.js')

// The CLI's defaults: `--timeout 30`, 8 servers started at a time.
const DEFAULT_TIMEOUT_MS = 30_000
const DEFAULT_CONCURRENCY = 8

/** The official client's classes: 2.x when installed, else 1.x. */
async function sdk() {
  try {
    const client = await import('@modelcontextprotocol/client')
    const stdio = await import('@modelcontextprotocol/client/stdio')
    return { v2: true, Client: client.Client, Http: client.StreamableHTTPClientTransport, Stdio: stdio.StdioClientTransport }
  } catch {
    try {
      const client = await import('@modelcontextprotocol/sdk/client/index.js')
      const stdio = await import('@modelcontextprotocol/sdk/client/stdio.js')
      const http = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
      return { v2: false, Client: client.Client, Http: http.StreamableHTTPClientTransport, Stdio: stdio.StdioClientTransport }
    } catch {
      throw usage('connectConfig needs @modelcontextprotocol/client (2.x) or @modelcontextprotocol/sdk (1.x) installed')
    }
  }
}

/** The transport of one config entry; a stdio server's stderr is kept (its last line says why it failed). */
function transportOf(kit, entry, stderr) {
  if (entry.url !== undefined) {
    const headers = entry.headers && Object.keys(entry.headers).length > 0 ? entry.headers : undefined
    return new kit.Http(new URL(entry.url), headers ? { requestInit: { headers } } : undefined)
  }
  const env = entry.env && Object.keys(entry.env).length > 0 ? { ...process.env, ...entry.env } : undefined
  const transport = new kit.Stdio({ command: entry.command, args: entry.args, env, cwd: entry.cwd ?? undefined, stderr: 'pipe' })
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)))
  return transport
}

/** A failed server as the CLI's row says it: the reason and the last stderr line. */
function failure(alias, err, stderr, timedOut) {
  if (err instanceof McpPreambleError) return err
  const tail = stderr.join('').split('\n').map((l) => l.trim()).filter(Boolean).pop()
  let detail = timedOut ? `server ${JSON.stringify(alias)}: no answer within the timeout` : `server ${JSON.stringify(alias)}: ${err?.message ?? String(err)}`
  if (tail) detail += ` (stderr: ${tail})`
  const kind = timedOut ? 'timeout' : 'connect'
  return new McpPreambleError(`${timedOut ? 'timed out' : 'cannot connect'}: ${detail}`, { kind, detail, cause: err })
}

/** One server: connected (handshake and first tools/list within `timeoutMs`) and added, or its failure recorded. */
async function start(live, kit, entry, { timeoutMs, clientInfo, clientOptions }) {
  const { alias } = entry
  const stderr = []
  const client = new kit.Client(clientInfo, clientOptions())
  let timer
  let timedOut = false
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true
      reject(new Error('timed out'))
    }, timeoutMs)
  })
  try {
    const transport = transportOf(kit, entry, stderr)
    const connecting = kit.v2 ? client.connect(transport).then(() => live.add(alias, client)) : live.connect(alias, client, transport)
    connecting.catch(() => {}) // after a timeout: closed below, its end is not the host's to catch
    await Promise.race([connecting, expired])
    live._owned.set(alias, client)
  } catch (err) {
    live.failures.set(alias, failure(alias, err, stderr, timedOut))
    await client.close().catch(() => {})
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Starts every server of an MCP config (`mcp.json`: Claude Desktop / Cursor
 * `mcpServers`, VS Code `servers`, stdio and `url` entries) with the
 * official client, at most `concurrency` at a time, and follows each in one
 * `LiveSection` under its alias. A server that cannot start or does not
 * answer within `timeoutMs` is left out; `live.failures.get(alias)` says
 * why (a `McpPreambleError` of kind `connect` or `timeout`, with its last
 * stderr line). `live.close()` closes every connection it opened.
 */
async function connectConfig(config, assembler, options = {}) {
  const {
    timeoutMs = DEFAULT_TIMEOUT_MS,
    concurrency = DEFAULT_CONCURRENCY,
    clientInfo = { name: 'mcp-preamble', version: native.VERSION },
    handshake = 'auto',
    clientOptions = {},
  } = options ?? {}
  if (typeof handshake !== 'string') throw usage(`handshake: expected a string, got ${typeof handshake}`)
  if (typeof config !== 'string' && !(config instanceof URL)) throw usage(`config: expected a string, got ${config === null ? 'null' : typeof config}`)
  if (!(Number.isInteger(concurrency) && concurrency >= 1)) throw usage(`concurrency: ${String(concurrency)} is not a whole number of at least 1`)
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw usage(`timeout_ms: ${String(timeoutMs)} is not a duration`)
  const path = config instanceof URL ? require('node:url').fileURLToPath(config) : config
  let entries
  try {
    entries = JSON.parse(native.configJson(path))
  } catch (err) {
    throw fromNative(err)
  }
  const live = assembler instanceof LiveSection ? assembler : new LiveSection(assembler ?? new Assembler())
  const kit = await sdk()
  // `handshake` as the CLI's --handshake: auto, legacy, or a 2026 version (2.x clients).
  const mode = handshake === 'auto' ? undefined : handshake === 'legacy' ? 'legacy' : { pin: handshake }
  const optionsOf = () => (kit.v2 && mode !== undefined ? { ...clientOptions, versionNegotiation: { mode } } : { ...clientOptions })
  const queue = [...entries]
  const worker = async () => {
    for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
      await start(live, kit, entry, { timeoutMs, clientInfo, clientOptions: optionsOf })
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, entries.length) }, worker))
  return live
}

module.exports = { DEFAULT_CONCURRENCY, DEFAULT_TIMEOUT_MS, connectConfig }
