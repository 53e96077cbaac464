'use strict'
// The section of live MCP clients (`@modelcontextprotocol/client` 2.x, both
// eras, or `@modelcontextprotocol/sdk` 1.x), kept current. States, grace
// deadlines and revisions are the crate's `Roster`, as in the Python package:
// this file is the SDK wiring (sdk.js: handshakes, tool pages) and one timer.

const { EventEmitter } = require('node:events')
const { performance } = require('node:perf_hooks')

const { Assembler, Server } = require('./core.js')
const native = require('./native.js')
const { connectionLost, listToolsPages, serverOf, usage } = require('./sdk.js')

const TOOLS_CHANGED = 'notifications/tools/list_changed'
const DEFAULT_GRACE_MS = 30_000 // the Rust hub's DEFAULT_GRACE

/** Makes `client.onclose` run `ended` after the host's handler, whichever
 * the host set before this or sets later (an accessor keeps the host's in
 * place of the field); a host handler that calls the one it found (this
 * one) runs once, and so does `ended`. Returns the undo. */
function chainOnclose(client, ended) {
  let host = client.onclose
  let running = false
  const chained = function (...args) {
    if (running) return undefined
    running = true
    try {
      return host?.apply(this, args)
    } finally {
      running = false
      ended()
    }
  }
  const get = () => chained
  Object.defineProperty(client, 'onclose', { configurable: true, enumerable: true, get, set: (fn) => (host = fn) })
  return () => {
    if (Object.getOwnPropertyDescriptor(client, 'onclose')?.get !== get) return
    Object.defineProperty(client, 'onclose', { configurable: true, enumerable: true, writable: true, value: host })
  }
}

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
    this._owned = new Map() // alias -> client, opened by connectConfig: closed by close()
    /** Servers `connectConfig` could not connect, by alias (a `McpPreambleError` each). */
    this.failures = new Map()
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
    this.failures.delete(alias)
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

  /** Re-lists the tools of `alias` (of every server without one) now. A
   * connection found closed ended on its own (`reconnecting`, as when its
   * `onclose` fires); any other error is thrown. */
  async refresh(alias) {
    for (const a of alias === undefined ? this._roster.aliases() : [alias]) {
      const wiring = this._wiring.get(a)
      if (!wiring || this._roster.state(a) !== 'connected') continue
      let server
      try {
        server = await serverOf(wiring.client, a, wiring.options)
      } catch (err) {
        if (!connectionLost(err)) throw err
        if (this._wiring.get(a) === wiring) this._apply(this._roster.lost(a, wiring.owner, performance.now()))
        continue
      }
      this._roster.updated(a, wiring.owner, server._native)
    }
  }

  /** Every server's state changes from now on, in order, as an async
   * iterator (`for await (const change of live.subscribeStates())`); its
   * `return()` (a `break`) ends it. The same changes as the `'state'` event
   * and as the Python package's `subscribe_states()`. */
  subscribeStates() {
    const queued = []
    const waiting = []
    let done = false
    const listener = (change) => {
      if (waiting.length > 0) waiting.shift()({ value: change, done: false })
      else queued.push(change)
    }
    this.on('state', listener)
    const end = () => {
      done = true
      this.off('state', listener)
      for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true })
      return Promise.resolve({ value: undefined, done: true })
    }
    return {
      next: () => {
        if (queued.length > 0) return Promise.resolve({ value: queued.shift(), done: false })
        if (done) return Promise.resolve({ value: undefined, done: true })
        return new Promise((resolve) => waiting.push(resolve))
      },
      return: end,
      [Symbol.asyncIterator]() {
        return this
      },
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

  /** The connected clients by alias (to call their tools). */
  get clients() {
    return new Map([...this._wiring].map(([alias, w]) => [alias, w.client]))
  }

  /** Stops following every client and the grace timer; clients stay open
   * (they are the caller's), but those `connectConfig` opened are closed. */
  async close() {
    for (const [alias, client] of [...this._owned]) {
      this._owned.delete(alias)
      await client.close().catch(() => {})
    }
    clearTimeout(this._timer)
    this._timer = undefined
    for (const alias of [...this._wiring.keys()]) await this._unwire(alias)
  }

  async [Symbol.asyncDispose]() {
    await this.close()
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
    // tools/list_changed is tapped where the client dispatches every
    // notification, so the host's own handlers (set with
    // setNotificationHandler or the 2.x `listChanged` option, before or
    // after this) are never replaced and all run.
    if (typeof client._onnotification === 'function') {
      const dispatch = client._onnotification
      const tap = function (message, ...rest) {
        if (message?.method === TOOLS_CHANGED && live._wiring.get(alias) === wiring) live.markChanged(alias)
        return dispatch.call(this, message, ...rest)
      }
      const live = this
      client._onnotification = tap
      wiring.undo.push(() => {
        if (client._onnotification === tap) {
          if (Object.getPrototypeOf(client)._onnotification === dispatch) delete client._onnotification
          else client._onnotification = dispatch
        }
      })
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
    const { close } = client
    const ownClose = Object.prototype.hasOwnProperty.call(client, 'close')
    const closeTap = function (...args) {
      closing = true
      return close.apply(this, args)
    }
    client.close = closeTap
    const ended = () => {
      if (this._wiring.get(alias) !== wiring) return
      if (closing) this._apply(this._roster.remove(alias, wiring.owner, 'closed'))
      else this._apply(this._roster.lost(alias, wiring.owner, performance.now()))
    }
    const untap = chainOnclose(client, ended)
    wiring.undo.push(() => {
      if (client.close === closeTap) {
        if (ownClose) client.close = close
        else delete client.close
      }
      untap()
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
