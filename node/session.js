'use strict'
// The section of live MCP clients, kept current: `Client` of
// `@modelcontextprotocol/client` (2.x, both eras) or of
// `@modelcontextprotocol/sdk` (1.x). States, grace deadlines and revisions
// are the crate's `Roster` (native), as in the Python package; this file
// is the SDK wiring (handshake, tool pages, notifications, close) and the
// one timer. The package depends on neither SDK: it uses the client given.

const { EventEmitter } = require('node:events')
const { performance } = require('node:perf_hooks')

const { Assembler, McpPreambleError, Server } = require('./core.js')
const native = require('./native.js')

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
    const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { cacheMode: 'refresh' })
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
  if (discover) return discover
  const version =
    protocolVersion ??
    (typeof client.getNegotiatedProtocolVersion === 'function' ? client.getNegotiatedProtocolVersion() : undefined) ??
    client.transport?.protocolVersion
  if (version === undefined || client.getServerVersion() === undefined) {
    throw usage('the client has no handshake result: connect it first (with @modelcontextprotocol/sdk 1.x over stdio, through live.connect, or pass { result })')
  }
  const capabilities = client.getServerCapabilities() ?? {}
  return { protocolVersion: version, capabilities, serverInfo: client.getServerVersion(), instructions: client.getInstructions() }
}

/** A `Server` of a connected client: its handshake and all its tools (listed now). */
async function serverOf(client, alias, { result, protocolVersion } = {}) {
  const pages = await listToolsPages(client)
  const handshake = result !== undefined ? result : handshakeOf(client, protocolVersion)
  // Which era: the crate tells by `supportedVersions`.
  const discover = handshake !== null && typeof handshake === 'object' && 'supportedVersions' in handshake
  return discover ? Server.fromDiscover(handshake, pages, { alias }) : Server.fromInitialize(handshake, pages, { alias })
}

/** Keeps one section of several live MCP clients current; emits `'state'`
 * with `{ alias, state, reason, revision }` on each change of a server's state. */
class LiveSection extends EventEmitter {
  /** `graceMs`: how long a server whose connection ended on its own (not
   * closed by the host) keeps its block before it goes. */
  constructor(assembler = new Assembler(), { graceMs = DEFAULT_GRACE_MS } = {}) {
    super()
    if (!(assembler instanceof Assembler)) throw usage('assembler: expected an Assembler')
    if (!(Number.isFinite(graceMs) && graceMs >= 0)) throw usage(`grace_ms: ${String(graceMs)} is not a duration`)
    this._assembler = assembler
    this._roster = new native.NativeRoster(graceMs)
    this._wiring = new Map() // alias -> { client, options, owner, undo }
    this._timer = undefined
    this._assembly = null
    this._queue = Promise.resolve()
  }

  /** Connects `client` over `transport` and adds it under `alias` (how the
   * section learns the protocol version of a 1.x client over stdio). */
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

  /** Adds (or replaces) a connected client under `alias`: reads its
   * handshake and tools, follows its `tools/list_changed` and its close.
   * `result` is the handshake result when the client did not keep it. */
  async add(alias, client, { result, protocolVersion } = {}) {
    if (typeof alias !== 'string') throw usage('alias: expected a string')
    if (!client || typeof client.listTools !== 'function') throw usage('client: expected a connected MCP Client')
    const options = { result, protocolVersion }
    const server = await serverOf(client, alias, options)
    await this._unwire(alias)
    const { owner, changes } = this._roster.connected(alias, server._native)
    const wiring = { client, options, owner, undo: [] }
    this._wiring.set(alias, wiring)
    this._apply(changes)
    await this._follow(alias, wiring)
    return server
  }

  /** Removes a server's block at once (its client stays the caller's). */
  async remove(alias) {
    await this._unwire(alias)
    this._apply(this._roster.remove(alias, undefined, 'removed'))
  }

  /** The connection of `alias` ended on its own: its block stays for the
   * grace period, then goes with one new revision unless `add` brings the
   * server back first. */
  disconnected(alias) {
    this._apply(this._roster.lost(alias, undefined, performance.now()))
  }

  /** `"connected"`, `"reconnecting"` (kept for the grace period) or `"gone"`. */
  state(alias) {
    return this._roster.state(alias)
  }

  /** Re-lists `alias`'s tools at the next `section()`. */
  markChanged(alias) {
    this._roster.markChanged(alias)
  }

  /** Re-lists the tools of `alias` (of every server without one) now. */
  async refresh(alias) {
    for (const a of alias === undefined ? this._roster.aliases() : [alias]) {
      const wiring = this._wiring.get(a)
      if (!wiring || this._roster.state(a) !== 'connected') continue
      const server = await serverOf(wiring.client, a, wiring.options)
      this._roster.updated(a, wiring.owner, server._native)
    }
  }

  /** The current section: re-lists servers that announced a change and
   * re-assembles (off the event loop) only when a server changed; the same
   * `Assembly` object until then. Calls are served in order. */
  section() {
    const next = this._queue.then(() => this._section())
    this._queue = next.catch(() => {})
    return next
  }

  async _section() {
    for (const alias of this._roster.takeStale()) await this.refresh(alias)
    const natives = this._roster.toAssemble()
    if (natives) {
      const assembly = await this._assembler.assembleAsync(natives.map((n) => new Server(n)))
      this._roster.assembled(assembly.digest)
      this._assembly = assembly
    }
    return this._assembly
  }

  /** Goes up by one each time the section's bytes change (0 before the first). */
  get revision() {
    return this._roster.revision
  }

  /** The servers by alias, as last listed (those reconnecting too). */
  get servers() {
    const servers = this._roster.servers()
    return new Map(this._roster.aliases().map((alias, i) => [alias, new Server(servers[i])]))
  }

  /** Stops following every client and the grace timer (clients stay open: they are the caller's). */
  async close() {
    clearTimeout(this._timer)
    this._timer = undefined
    for (const alias of [...this._wiring.keys()]) await this._unwire(alias)
  }

  /** Tells listeners of `changes`, lets go of the servers gone, and sets
   * the timer for the next grace deadline. */
  _apply(changes) {
    for (const change of changes) {
      if (change.state !== 'connected') this._unwire(change.alias).catch(() => {})
      this.emit('state', change)
    }
    clearTimeout(this._timer)
    this._timer = undefined
    const at = this._roster.nextDeadline()
    if (at === null || at === undefined) return
    this._timer = setTimeout(() => this._apply(this._roster.expire(performance.now())), Math.max(0, at - performance.now()))
    // A pending grace period does not keep the process alive.
    this._timer.unref?.()
  }

  async _follow(alias, wiring) {
    const { client } = wiring
    // tools/list_changed: the host's own handler (if any) still runs, with
    // every argument (a 2.x client's handlers take the codec too).
    const handlers = client._notificationHandlers instanceof Map ? client._notificationHandlers : undefined
    const previous = handlers?.get(TOOLS_CHANGED)
    const handler = async (...args) => {
      if (this._wiring.get(alias) === wiring) this.markChanged(alias)
      if (previous) await previous(...args)
    }
    if (handlers) {
      handlers.set(TOOLS_CHANGED, handler)
      wiring.undo.push(() => {
        if (handlers.get(TOOLS_CHANGED) !== handler) return
        if (previous) handlers.set(TOOLS_CHANGED, previous)
        else handlers.delete(TOOLS_CHANGED)
      })
    } else {
      client.setNotificationHandler(TOOLS_CHANGED, handler)
    }
    // A 2026 connection delivers it only on a subscriptions/listen stream.
    const modern = typeof client.getProtocolEra === 'function' && client.getProtocolEra() === 'modern'
    if (modern && client.getServerCapabilities?.()?.tools?.listChanged && !client.autoOpenedSubscription && typeof client.listen === 'function') {
      const subscription = await client.listen({ toolsListChanged: true })
      wiring.undo.push(() => subscription.close?.())
    }
    // The close: by the host (client.close()) the block goes at once; on
    // its own (the server exited, the transport died) after the grace period.
    let closing = false
    const { close, onclose } = client
    client.close = function (...args) {
      closing = true
      return close.apply(this, args)
    }
    client.onclose = (...args) => {
      onclose?.(...args)
      if (this._wiring.get(alias) !== wiring) return
      if (closing) this._apply(this._roster.remove(alias, wiring.owner, 'closed'))
      else this._apply(this._roster.lost(alias, wiring.owner, performance.now()))
    }
    wiring.undo.push(() => {
      client.close = close
      client.onclose = onclose
    })
  }

  async _unwire(alias) {
    const wiring = this._wiring.get(alias)
    if (!wiring) return
    this._wiring.delete(alias)
    for (const undo of wiring.undo.splice(0)) await undo()
  }
}

module.exports = { DEFAULT_GRACE_MS, LiveSection, listToolsPages, serverOf }
