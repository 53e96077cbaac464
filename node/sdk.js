'use strict'
// The official SDKs' side of a live section (moved from session.js, which
// keeps LiveSection itself): a client's handshake and tool pages as a
// Server. Nothing here decides a server's state.

const { McpPreambleError, Server } = require('./core.js')

// The crate reads at most this many tools/list pages of a server (Limits).
const MAX_PAGES = 100

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

// What a 1.x client asks for when the SDK installed beside this package is
// not found: the newest version of @modelcontextprotocol/sdk 1.x (1.32).
const SDK1_REQUESTED = '2025-11-25'

/** The version a `@modelcontextprotocol/sdk` 1.x client requests in
 * `initialize`: its `LATEST_PROTOCOL_VERSION`. */
function sdk1Requested() {
  try {
    return require('@modelcontextprotocol/sdk/types.js').LATEST_PROTOCOL_VERSION ?? SDK1_REQUESTED
  } catch {
    return SDK1_REQUESTED
  }
}

/** The negotiated version of a client: the one given, the 2.x client's,
 * the 1.x HTTP transport's; a 1.x client over stdio keeps none, so the
 * version it requested (a server that supports it answers with it). */
function versionOf(client, protocolVersion) {
  if (protocolVersion !== undefined) return protocolVersion
  if (typeof client.getNegotiatedProtocolVersion === 'function') return client.getNegotiatedProtocolVersion()
  return client.transport?.protocolVersion ?? sdk1Requested()
}

/** The handshake a client kept: the `server/discover` result of a 2.x
 * client on a 2026 connection, else the `initialize` result's parts. */
function handshakeOf(client, protocolVersion) {
  const discover = typeof client.getDiscoverResult === 'function' ? client.getDiscoverResult() : undefined
  if (discover) return discover
  const version = versionOf(client, protocolVersion)
  if (version === undefined || client.getServerVersion() === undefined) {
    throw usage('client: not connected (no handshake result): await client.connect(transport) first, or pass { result }')
  }
  const capabilities = client.getServerCapabilities() ?? {}
  return { protocolVersion: version, capabilities, serverInfo: client.getServerVersion(), instructions: client.getInstructions() }
}

/** Whether an error of a request says the connection is gone (closed, the
 * process ended), not that the server answered an error: the 2.x SDK's
 * codes, the 1.x SDK's `ConnectionClosed` and its "Not connected". */
function connectionLost(err) {
  const code = err?.code
  if (code === 'CONNECTION_CLOSED' || code === 'NOT_CONNECTED' || code === -32000) return true
  if (code === 'EPIPE' || code === 'ECONNRESET' || code === 'ERR_STREAM_DESTROYED') return true
  return err instanceof Error && err.message === 'Not connected'
}

/** A `Server` of a connected client: its handshake and all its tools (listed now). */
async function serverOf(client, alias, { result, protocolVersion } = {}) {
  const pages = await listToolsPages(client)
  const handshake = result !== undefined ? result : handshakeOf(client, protocolVersion)
  // Which era: the crate tells by `supportedVersions`.
  const discover = handshake !== null && typeof handshake === 'object' && 'supportedVersions' in handshake
  return discover ? Server.fromDiscover(handshake, pages, { alias }) : Server.fromInitialize(handshake, pages, { alias })
}

module.exports = { connectionLost, listToolsPages, serverOf, usage }
