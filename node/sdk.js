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

module.exports = { listToolsPages, serverOf, usage }
