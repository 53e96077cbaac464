'use strict'
// The section of live MCP clients, kept current: `Client` of
// `@modelcontextprotocol/client` (2.x, both eras) or of
// `@modelcontextprotocol/sdk` (1.x). An agent loop calls
// `await live.section()` before each model request: it re-lists the tools of
// every server that announced a change (`notifications/tools/list_changed`),
// re-assembles only when something changed, and returns the `Assembly`
// (whose `digest` changes exactly when the section's bytes do). The package
// depends on neither SDK: it uses the client it is given.

const { Assembler, McpPreambleError, Server } = require('./index.js')

const TOOLS_CHANGED = 'notifications/tools/list_changed'
// The crate reads at most this many tools/list pages of a server (Limits).
const MAX_PAGES = 100
// How long a server whose connection ended on its own keeps its block (the
// Rust hub's DEFAULT_GRACE), in milliseconds.
const DEFAULT_GRACE_MS = 30_000

function usage(detail) {
  return new McpPreambleError(`invalid configuration: ${detail}`, { kind: 'invalid_config', detail })
}

/** Every `tools/list` page of a client, following `nextCursor` (a 2.x client
 * aggregates the pages itself; the cache is refreshed, not served). */
async function listToolsPages(client) {
  const pages = []
  let cursor
  for (let i = 0; i < MAX_PAGES; i++) {
    const params = cursor === undefined ? undefined : { cursor }
    const page = await client.listTools(params, { cacheMode: 'refresh' })
    pages.push(page)
    cursor = page?.nextCursor
    if (cursor === undefined || cursor === null) break
  }
  return pages
}

/** The handshake a client kept: the `server/discover` result of a 2.x
 * client on a 2026 connection, else the `initialize` result's parts. */
function handshakeOf(client, protocolVersion) {
  const discover = typeof client.getDiscoverResult === 'function' ? client.getDiscoverResult() : undefined
  if (discover) return { discover: true, result: discover }
  const version =
    protocolVersion ??
    (typeof client.getNegotiatedProtocolVersion === 'function' ? client.getNegotiatedProtocolVersion() : undefined) ??
    client.transport?.protocolVersion
  if (version === undefined || client.getServerVersion() === undefined) {
    throw usage('the client has no handshake result: connect it first (with @modelcontextprotocol/sdk 1.x over stdio, through live.connect, or pass { result })')
  }
  const result = {
    protocolVersion: version,
    capabilities: client.getServerCapabilities() ?? {},
    serverInfo: client.getServerVersion(),
  }
  const instructions = client.getInstructions()
  if (instructions !== undefined) result.instructions = instructions
  return { discover: false, result }
}

/** A `Server` of a connected client: its handshake and all its tools (listed now). */
async function serverOf(client, alias, { result, protocolVersion } = {}) {
  const pages = await listToolsPages(client)
  if (result !== undefined) {
    const discover = result !== null && typeof result === 'object' && 'supportedVersions' in result
    return discover ? Server.fromDiscover(result, pages, { alias }) : Server.fromInitialize(result, pages, { alias })
  }
  const kept = handshakeOf(client, protocolVersion)
  return kept.discover
    ? Server.fromDiscover(kept.result, pages, { alias })
    : Server.fromInitialize(kept.result, pages, { alias })
}

/** Keeps one section of several live MCP clients current. */
class LiveSection {
  /**
   * `assembler` assembles every section; `graceMs` is how long a server
   * whose connection ended on its own (not closed by the host) keeps its
   * block before it goes.
   */
  constructor(assembler = new Assembler(), { graceMs = DEFAULT_GRACE_MS } = {}) {
    if (!(assembler instanceof Assembler)) throw usage('assembler: expected an Assembler')
    if (!(Number.isFinite(graceMs) && graceMs >= 0)) throw usage(`grace_ms: ${String(graceMs)} is not a duration`)
    this._assembler = assembler
    this._graceMs = graceMs
    this._entries = new Map() // alias -> { client, options, server, undo }
    this._stale = new Set()
    this._timers = new Map()
    this._assembly = null
    this._dirty = true
    this._revision = 0
    this._queue = Promise.resolve()
  }

  /**
   * Connects `client` over `transport` and adds it under `alias`. With
   * `@modelcontextprotocol/sdk` 1.x over stdio this is how the section
   * learns the negotiated protocol version (the client keeps none).
   */
  async connect(alias, client, transport, options = {}) {
    let negotiated
    const set = typeof transport.setProtocolVersion === 'function' ? transport.setProtocolVersion.bind(transport) : undefined
    transport.setProtocolVersion = (version) => {
      negotiated = version
      set?.(version)
    }
    await client.connect(transport)
    return this.add(alias, client, { protocolVersion: negotiated, ...options })
  }

  /**
   * Adds (or replaces) a connected client under `alias`: reads its
   * handshake and tools, follows its `tools/list_changed` (opening
   * `subscriptions/listen` on a 2026 connection of a 2.x client) and its
   * close. `result` is the handshake result when the client did not keep it.
   */
  async add(alias, client, { result, protocolVersion } = {}) {
    if (typeof alias !== 'string') throw usage('alias: expected a string')
    if (!client || typeof client.listTools !== 'function') throw usage('client: expected a connected MCP Client')
    const options = { result, protocolVersion }
    const server = await serverOf(client, alias, options)
    await this._forget(alias)
    this._cancelGrace(alias)
    const entry = { client, options, server, undo: [] }
    this._entries.set(alias, entry)
    this._dirty = true
    await this._follow(alias, entry)
    return server
  }

  /** Removes a server's block at once (its client stays the caller's). */
  async remove(alias) {
    this._cancelGrace(alias)
    await this._forget(alias)
  }

  /** The connection of `alias` ended on its own: its block stays for the
   * grace period, then goes with one new revision unless `add` brings the
   * server back first. */
  disconnected(alias) {
    const entry = this._entries.get(alias)
    if (!entry || this._timers.has(alias)) return
    for (const undo of entry.undo.splice(0)) undo()
    this._stale.delete(alias)
    if (this._graceMs === 0) {
      this._drop(alias)
      return
    }
    const timer = setTimeout(() => this._drop(alias), this._graceMs)
    // A pending grace period does not keep the process alive.
    timer.unref?.()
    this._timers.set(alias, timer)
  }

  /** `"connected"`, `"reconnecting"` (kept for the grace period) or `"gone"`. */
  state(alias) {
    if (!this._entries.has(alias)) return 'gone'
    return this._timers.has(alias) ? 'reconnecting' : 'connected'
  }

  /** Re-lists `alias`'s tools at the next `section()`. */
  markChanged(alias) {
    if (this._entries.has(alias) && !this._timers.has(alias)) this._stale.add(alias)
  }

  /** Re-lists the tools of `alias` (of every server without one) now. */
  async refresh(alias) {
    const aliases = alias === undefined ? [...this._entries.keys()] : [alias]
    for (const a of aliases) {
      this._stale.delete(a)
      const entry = this._entries.get(a)
      if (!entry || this._timers.has(a)) continue
      const server = await serverOf(entry.client, a, entry.options)
      if (this._entries.get(a) === entry && !server.equals(entry.server)) {
        entry.server = server
        this._dirty = true
      }
    }
  }

  /**
   * The current section: re-lists servers that announced a change and
   * re-assembles (off the event loop) only when a server changed; the same
   * `Assembly` object until then. Calls are served in order.
   */
  section() {
    const next = this._queue.then(() => this._section())
    this._queue = next.catch(() => {})
    return next
  }

  async _section() {
    for (const alias of [...this._stale].sort()) await this.refresh(alias)
    if (this._assembly === null || this._dirty) {
      this._dirty = false
      const servers = [...this._entries.values()].map((e) => e.server)
      const assembly = await this._assembler.assembleAsync(servers)
      if (this._assembly === null || assembly.digest !== this._assembly.digest) this._revision++
      this._assembly = assembly
    }
    return this._assembly
  }

  /** Goes up by one each time the section's bytes change (0 before the first). */
  get revision() {
    return this._revision
  }

  /** The servers by alias, as last listed (those reconnecting too). */
  get servers() {
    return new Map([...this._entries].map(([alias, e]) => [alias, e.server]))
  }

  /** Stops following every client and every grace timer (clients stay open: they are the caller's). */
  async close() {
    for (const alias of [...this._entries.keys()]) {
      this._cancelGrace(alias)
      const entry = this._entries.get(alias)
      for (const undo of entry.undo.splice(0)) await undo()
    }
  }

  async _follow(alias, entry) {
    const { client } = entry
    // tools/list_changed: the host's own handler (if any) still runs.
    const handlers = client._notificationHandlers instanceof Map ? client._notificationHandlers : undefined
    const previous = handlers?.get(TOOLS_CHANGED)
    const handler = async (notification) => {
      if (this._entries.get(alias) === entry) this.markChanged(alias)
      if (previous) await previous(notification)
    }
    if (handlers) {
      handlers.set(TOOLS_CHANGED, handler)
      entry.undo.push(() => {
        if (handlers.get(TOOLS_CHANGED) === handler) {
          if (previous) handlers.set(TOOLS_CHANGED, previous)
          else handlers.delete(TOOLS_CHANGED)
        }
      })
    } else {
      client.setNotificationHandler(TOOLS_CHANGED, handler)
    }
    // A 2026 connection delivers it only on a subscriptions/listen stream.
    const modern = typeof client.getProtocolEra === 'function' && client.getProtocolEra() === 'modern'
    const listChanged = client.getServerCapabilities?.()?.tools?.listChanged
    if (modern && listChanged && !client.autoOpenedSubscription && typeof client.listen === 'function') {
      const subscription = await client.listen({ toolsListChanged: true })
      entry.undo.push(() => subscription.close?.())
    }
    // The close: by the host (client.close()) the block goes at once; on
    // its own (the server exited, the transport died) after the grace period.
    let closing = false
    const close = client.close
    const onclose = client.onclose
    client.close = function (...args) {
      closing = true
      return close.apply(this, args)
    }
    client.onclose = (...args) => {
      onclose?.(...args)
      if (this._entries.get(alias) !== entry) return
      if (closing) this._drop(alias)
      else this.disconnected(alias)
    }
    entry.undo.push(() => {
      client.close = close
      client.onclose = onclose
    })
  }

  async _forget(alias) {
    const entry = this._entries.get(alias)
    if (!entry) return
    for (const undo of entry.undo.splice(0)) await undo()
    this._drop(alias)
  }

  _drop(alias) {
    this._cancelGrace(alias)
    this._stale.delete(alias)
    const entry = this._entries.get(alias)
    if (!entry) return
    for (const undo of entry.undo.splice(0)) undo()
    this._entries.delete(alias)
    this._dirty = true
  }

  _cancelGrace(alias) {
    const timer = this._timers.get(alias)
    if (timer !== undefined) clearTimeout(timer)
    this._timers.delete(alias)
  }
}

module.exports = { DEFAULT_GRACE_MS, LiveSection, listToolsPages, serverOf }
