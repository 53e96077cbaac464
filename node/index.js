'use strict'
// mcp-preamble for Node: MCP servers' handshake instructions as one
// budgeted, sanitized system-prompt section. The public API: core.js
// (servers, the assembler, pins, the lint) and session.js (LiveSection),
// which builds on core.js. Neither requires this file: no require circle.

const core = require('./core.js')
const session = require('./session.js')
const { connectConfig } = require('./connect.js')

module.exports = {
  Assembler: core.Assembler,
  Assembly: core.Assembly,
  LiveSection: session.LiveSection,
  Lock: core.Lock,
  McpPreambleError: core.McpPreambleError,
  Server: core.Server,
  connectConfig,
  VERSION: core.VERSION,
  lint: core.lint,
  serverOf: session.serverOf,
}
