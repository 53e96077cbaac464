'use strict'
// The section of live MCP clients (`@modelcontextprotocol/client` 2.x, both
// eras, or `@modelcontextprotocol/sdk` 1.x), kept current. States, grace
// deadlines and revisions are the crate's `Roster`, as in the Python package:
// this file is the SDK wiring (sdk.js: handshakes, tool pages) and one timer.

const { EventEmitter } = require('node:events')
const { performance } = require('node:perf_hooks')

const { Assembler, Server } = require('./core.js')
const native = require('./native.js')
const { listToolsPages, serverOf, usage } = require('./sdk.js')

const TOOLS_CHANGED = 'notifications/tools/list_changed'
const DEFAULT_GRACE_MS = 30_000 // the Rust hub's DEFAULT_GRACE

/** Keeps one section of several live MCP clients current; emits `'state'`
 * with `{ alias, state, reason, revision }` on each change of a server's state. */
class LiveSection extends EventEmitter {
  /** `graceMs`: how long a server whose connection ended on its own keeps its block. */
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

  /** Connects `client` over `transport` and adds it (the way for 1.x clients over stdio). */
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

  /** Adds (or replaces) a connected client: reads its handshake (`result`, when
   * the client kept none) and tools, follows its `tools/list_changed` and close. */
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

  /** The connection of `alias` ended on its own: kept for the grace period unless `add` brings it back. */
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

  /** The section: re-lists servers that announced a change, re-assembles (off
   * the event loop) only when one changed, else the same object; in call order. */
  section() {
    const next = this._queue.then(() => this._section())
    this._queue = next.catch(() => {})
    return next
  }

  async _section() {
    for (const alias of this._roster.takeStale()) await this.refresh(alias)
    const natives = this._roster.pendingAssembly()
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

  /** Tells listeners of `changes`, lets go of ended clients, sets the grace timer. */
  _apply(changes) {
    for (const change of changes) {
      if (change.state !== 'connected') this._unwire(change.alias).catch(() => {})
      this.emit('state', change)
    }
    clearTimeout(this._timer)
    this._timer = undefined
    const at = this._roster.nextDeadline()
    if (at == null) return
    this._timer = setTimeout(() => this._apply(this._roster.expire(performance.now())), Math.max(0, at - performance.now()))
    this._timer.unref?.() // a pending grace period does not keep the process alive
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
