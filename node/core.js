'use strict'
// mcp-preamble for Node: servers, the assembler, pins and the lint (index.js
// exports them with session.js's LiveSection, which builds on this file).
// The core is the Rust crate (native.js loads it): the same inputs give the
// same bytes, token counts and removals as its CLI. This file is the API in
// JavaScript's conventions; the native module only moves values across, and
// reports cross as the crate's own JSON (a public format).

const { createHash } = require('node:crypto')
const { fileURLToPath } = require('node:url')

const native = require('./native.js')

/** Every error of the package: `kind` is the crate's error kind. */
class McpPreambleError extends Error {
  constructor(message, { kind = 'other', detail, line = null, template = null, rpc = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'McpPreambleError'
    this.kind = kind
    this.detail = detail === undefined ? message : detail
    this.line = line
    this.template = template
    this.rpc = rpc
  }
}

const PAYLOAD = '{"mcpPreambleError":'

/** The package's error for what a native call threw. */
function fromNative(err) {
  const message = err && typeof err.message === 'string' ? err.message : String(err)
  if (message.startsWith(PAYLOAD)) {
    const f = JSON.parse(message).mcpPreambleError
    return new McpPreambleError(f.message, f)
  }
  // Not the crate's error (a panic caught at the boundary): still this class.
  return new McpPreambleError(message, { kind: 'other', cause: err })
}

/** `fn()`, with a native error thrown as a `McpPreambleError`. */
function call(fn) {
  try {
    return fn()
  } catch (err) {
    throw fromNative(err)
  }
}

function invalid(kind, detail, cause) {
  const words = kind === 'invalid_json' ? 'invalid json' : 'invalid configuration'
  return new McpPreambleError(`${words}: ${detail}`, { kind, detail, cause })
}

function typeName(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/** `value` as JSON text: a string is taken as JSON text already. */
function json(value, what) {
  if (typeof value === 'string') return value
  let text
  try {
    text = JSON.stringify(value)
  } catch (err) {
    throw invalid('invalid_json', `${what}: ${err.message}`, err)
  }
  if (text === undefined) throw invalid('invalid_json', `${what}: ${typeName(value)} is not JSON`)
  return text
}

function text(key, value) {
  if (value === undefined || value === null || typeof value === 'string') return value ?? undefined
  throw invalid('invalid_config', `${key}: expected a string, got ${typeName(value)}`)
}

function aliasOf(options) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw invalid('invalid_config', `options: expected an object, got ${typeName(options)}`)
  return text('alias', options.alias)
}

/** What a host knows about one MCP server: its handshake and its tools. */
class Server {
  constructor(handle) {
    if (!(handle instanceof native.NativeServer)) {
      throw new TypeError('use Server.fromCapture, Server.fromInitialize or Server.fromDiscover')
    }
    this._native = handle
  }

  /** A capture file (the `tests/corpus/` format) or a snapshot file; without
   * `alias` the file's alias, else its stem, as the CLI names it. */
  static fromCapture(file, options) {
    const alias = aliasOf(options)
    const p = pathText('path', file)
    if (p === undefined) throw invalid('invalid_config', 'path: expected a string, got undefined')
    return new Server(call(() => native.NativeServer.fromCapture(p, alias)))
  }

  /** The `initialize` result (an object, its JSON-RPC response, or its JSON
   * text) and the tools (a list of tools, a `tools/list` result, or a list
   * of pages). */
  static fromInitialize(result, tools, options) {
    return Server._from(false, result, tools, options)
  }

  /** The `server/discover` result (2026-07-28 revision); as `fromInitialize`. */
  static fromDiscover(result, tools, options) {
    return Server._from(true, result, tools, options)
  }

  static _from(discover, result, tools, options) {
    const alias = aliasOf(options)
    const method = discover ? 'server/discover' : 'initialize'
    const resultJson = json(result, method)
    // Every shape of tools (a list of tools, a result, its response, pages,
    // JSON text) is the crate's to read: ServerSnapshot::from_handshake.
    // A string is one page's JSON text: it crosses as a JSON string.
    const toolsJson = tools === undefined ? 'null' : typeof tools === 'string' ? JSON.stringify(tools) : json(tools, 'tools')
    const era = discover ? 'modern' : 'legacy'
    return new Server(call(() => native.NativeServer.fromHandshake(era, resultJson, toolsJson, alias)))
  }

  /** A snapshot file's text (`toSnapshotJson`). */
  static fromSnapshotJson(textValue) {
    const t = text('text', textValue) ?? ''
    return new Server(call(() => native.NativeServer.fromSnapshotJson(t)))
  }

  /** The snapshot file format of `mcp-preamble snapshot`. */
  toSnapshotJson(capturedMs = Date.now()) {
    if (typeof capturedMs !== 'number') {
      throw invalid('invalid_config', `captured_ms: expected a number, got ${typeName(capturedMs)}`)
    }
    return this._native.snapshotJson(capturedMs)
  }

  /** The same server under another alias (the name the section shows). */
  withAlias(alias) {
    return new Server(this._native.withAlias(text('alias', alias) ?? ''))
  }

  get alias() {
    return this._native.alias ?? null
  }
  get name() {
    return this._native.name
  }
  get serverName() {
    return this._native.serverName
  }
  get version() {
    return this._native.version
  }
  get instructions() {
    return this._native.instructions ?? null
  }
  get instructionsState() {
    return this._native.instructionsState
  }
  get era() {
    return this._native.era
  }
  get protocolVersion() {
    return this._native.protocolVersion
  }
  get toolNames() {
    return this._native.toolNames
  }
  get otherEras() {
    return this._native.otherEras
  }

  /** The same snapshot (a capture's other handshake aside). */
  equals(other) {
    return other instanceof Server && this._native.equals(other._native)
  }
}

function natives(servers) {
  if (servers === null || servers === undefined || typeof servers[Symbol.iterator] !== 'function') {
    throw invalid('invalid_config', `servers: expected an iterable of Server, got ${typeName(servers)}`)
  }
  return Array.from(servers, (s) => {
    if (!(s instanceof Server)) throw invalid('invalid_config', `servers: expected a Server, got ${typeName(s)}`)
    return s._native
  })
}

const camel = (key) => key.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase())

/** A report object with camelCase keys, as JavaScript spells them
 * (`hidden_characters`' keys are data and stay as they are). */
function camelize(value, parentKey) {
  if (Array.isArray(value)) return value.map((v) => camelize(v, parentKey))
  if (value === null || typeof value !== 'object' || parentKey === 'hidden_characters') return value
  const out = {}
  for (const [k, v] of Object.entries(value)) out[camel(k)] = camelize(v, k)
  return out
}

/** How a server compares with its pin: `state` (`"unpinned"`, `"new"`,
 * `"same"`, `"changed"`) and what changed. */
function pinCheck(d) {
  const c = camelize(d ?? { state: 'unpinned' })
  return {
    state: c.state,
    instructionsChanged: c.instructionsChanged ?? false,
    invisibleOnly: c.invisibleOnly ?? false,
    toolsAdded: c.toolsAdded ?? [],
    toolsRemoved: c.toolsRemoved ?? [],
    toolsRedescribed: c.toolsRedescribed ?? [],
    cutChanged: c.cutChanged ?? false,
    sha256: c.sha256 ?? null,
    onChange: c.onChange ?? null,
    diff: c.diff ?? null,
    changed: c.state === 'changed',
  }
}

function serverReport(d) {
  const c = camelize(d)
  return {
    ...c,
    alias: c.alias ?? null,
    span: c.span ?? null,
    budget: c.budget ?? null,
    removed: (c.removed ?? []).map((r) => ({ ...r, tool: r.tool ?? null, server: r.server ?? null })),
    truncated: c.truncated ?? false,
    pin: pinCheck(d.pin),
    diagnostics: c.diagnostics ?? [],
    hiddenCharacters: c.hiddenCharacters ?? {},
    toolTokens: c.toolTokens ?? null,
    policy: c.policy ?? null,
    deferred: c.deferred ?? null,
    limits: c.limits ?? [],
    namespace: c.namespace ?? null,
  }
}

/** An assembled section and its report. */
class Assembly {
  constructor(handle) {
    const d = JSON.parse(handle.reportJson())
    /** The section: what goes into the system prompt. */
    this.text = d.text
    /** SHA-256 of `text` (hex): tells when the prompt's bytes (and its cache) change. */
    this.digest = createHash('sha256').update(d.text, 'utf8').digest('hex')
    this.totalTokens = d.total_tokens
    this.encoding = d.encoding
    this.template = d.template
    this.counting = camelize(d.counting)
    this.servers = d.servers.map(serverReport)
    this.diagnostics = camelize(d.diagnostics ?? [])
    Object.defineProperty(this, '_preview', { value: handle.previewJson(), enumerable: false })
  }

  /** The report, byte for byte what `mcp-preamble preview --json` prints for
   * the same capture files and settings (`connections` is empty). */
  toJSON() {
    return this._preview
  }

  /** The report as an object (the `assembly` object of `toJSON()`). */
  toObject() {
    return JSON.parse(this._preview).assembly
  }
}

// Options and the preview flags of the same names whose values are counts.
const COUNTS = { budget: 'budget', totalBudget: 'total_budget', deferOver: 'defer_over' }
const TEXTS = { template: 'template', encoding: 'encoding', model: 'model', tokenizer: 'tokenizer', toolNames: 'tool_names', target: 'target', policy: 'policy' }
// The options that are paths (a string or a `file:` URL).
const PATHS = new Set(['template', 'tokenizer', 'policy'])
// The keys only the policy file has, under the file's own names, with their
// JSON type (their values are checked by the file's schema in the crate).
const POLICY_KEYS = {
  order: ['order', 'text'],
  dedup: ['dedup', 'flag'],
  similarity: ['similarity', 'number'],
  listToolOnlyServers: ['list_tool_only_servers', 'flag'],
  toolDescriptions: ['tool_descriptions', 'flag'],
  shorteningNote: ['shortening_note', 'flag'],
  onChange: ['on_change', 'text'],
}
const OTHERS = ['serverBudgets', 'deferred', 'lock']

// The largest count a JavaScript number holds exactly: larger ones are
// refused in both packages (tests/data/assembler-options.json).
const MAX_COUNT = Number.MAX_SAFE_INTEGER

/** A count as the text the CLI's flag would get (the crate checks it as it
 * checks the flag: `-1` is refused there). */
function count(key, value) {
  if (value === undefined || value === null) return undefined
  let n
  if (typeof value === 'bigint') n = value
  else if (typeof value === 'number' && Number.isInteger(value)) n = BigInt(value)
  else throw invalid('invalid_config', `${key}: expected an integer, got ${typeof value === 'number' ? String(value) : typeName(value)}`)
  if (n > BigInt(MAX_COUNT)) throw invalid('invalid_config', `${key}: ${n} is more than ${MAX_COUNT}`)
  return n.toString()
}

/** A path: a string, or a `file:` URL. */
function pathText(key, value) {
  if (value instanceof URL) {
    if (value.protocol !== 'file:') throw invalid('invalid_config', `${key}: ${JSON.stringify(value.href)} is not a file: URL`)
    return fileURLToPath(value)
  }
  if (value === undefined || value === null || typeof value === 'string') return value ?? undefined
  throw invalid('invalid_config', `${key}: expected a path, got ${typeName(value)}`)
}

/** `deferred`: one alias or an iterable of them (the CLI's flag repeats). */
function aliases(key, value) {
  if (value === undefined || value === null) return []
  if (typeof value === 'string') return [value]
  if (typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
    throw invalid('invalid_config', `${key}: expected a string or a list of strings, got ${typeName(value)}`)
  }
  return Array.from(value, (a, i) => text(`${key}[${i}]`, a) ?? '')
}

/** `serverBudgets`: counts by alias. */
function counts(key, value) {
  if (value === undefined || value === null) return []
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('invalid_config', `${key}: expected an object of counts by alias, got ${typeName(value)}`)
  }
  return Object.entries(value).map(([alias, n]) => [alias, count(`${key}[${JSON.stringify(alias)}]`, n)])
}

/** A policy-only key's value, of its JSON type (its values are the crate's to check). */
function typed(key, value, type) {
  if (value === undefined || value === null) return undefined
  const ok = type === 'flag' ? typeof value === 'boolean' : type === 'number' ? typeof value === 'number' : typeof value === 'string'
  if (ok) return value
  const expected = type === 'flag' ? 'a boolean' : type === 'number' ? 'a number' : 'a string'
  throw invalid('invalid_config', `${key}: expected ${expected}, got ${typeName(value)}`)
}

/** The native options of `options`, checked as the CLI checks its flags. */
function nativeOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('invalid_config', `options: expected an object, got ${typeName(options)}`)
  }
  const known = [...Object.keys(COUNTS), ...Object.keys(TEXTS), ...Object.keys(POLICY_KEYS), ...OTHERS]
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalid('invalid_config', `unknown option ${JSON.stringify(key)} (options: ${known.join(', ')})`)
  }
  const out = {}
  for (const [key, name] of Object.entries(COUNTS)) out[camel(name)] = count(name, options[key])
  for (const [key, name] of Object.entries(TEXTS)) {
    out[camel(name)] = PATHS.has(name) ? pathText(name, options[key]) : text(name, options[key])
  }
  out.serverBudgets = counts('server_budgets', options.serverBudgets)
  out.deferred = aliases('deferred', options.deferred)
  const policyKeys = {}
  for (const [key, [name, type]] of Object.entries(POLICY_KEYS)) {
    const value = typed(name, options[key], type)
    if (value !== undefined) policyKeys[name] = value
  }
  out.policyKeys = json(policyKeys, 'settings')
  return out
}

/** The native options and lock of an `Assembler`'s options. */
function assemblerOptions(options) {
  const opts = nativeOptions(options ?? {})
  const lock = options?.lock
  if (lock !== undefined && lock !== null && !(lock instanceof Lock)) {
    throw invalid('invalid_config', `lock: expected a Lock, got ${typeName(lock)}`)
  }
  return [opts, lock ? lock._native : undefined]
}

/** Turns servers into one budgeted, sanitized system-prompt section. */
class Assembler {
  /**
   * Every option is a setting of `mcp-preamble preview` and of the policy
   * file's `[defaults]`, checked as the CLI and the file check it (README
   * has the table). An invalid value throws a `McpPreambleError` with the
   * CLI's message.
   */
  constructor(options = {}) {
    const [opts, lock] = assemblerOptions(options)
    this._native = call(() => new native.NativeAssembler(opts, lock))
  }

  /** As the constructor, with the settings loaded on libuv's thread pool
   * (a tokenizer file is read and parsed there: seconds for a large one),
   * so the event loop goes on meanwhile. Rejects with the same errors. */
  static async create(options = {}) {
    const [opts, lock] = assemblerOptions(options)
    const assembler = Object.create(Assembler.prototype)
    try {
      assembler._native = await native.NativeAssembler.create(opts, lock)
    } catch (err) {
      throw fromNative(err)
    }
    return assembler
  }

  /** The assembler of a policy file (`mcp-preamble.toml`); `options`
   * override it as the CLI's flags override `--policy`. */
  static fromPolicy(file, options = {}) {
    return new Assembler({ ...options, policy: file })
  }

  /** The section of `servers` (in this order) and its report, on this thread. */
  assemble(servers) {
    const handles = natives(servers)
    return new Assembly(call(() => this._native.assemble(handles)))
  }

  /** As `assemble`, on libuv's thread pool: the event loop goes on meanwhile. */
  async assembleAsync(servers) {
    const handles = natives(servers)
    let handle
    try {
      handle = await this._native.assembleAsync(handles)
    } catch (err) {
      throw fromNative(err)
    }
    return new Assembly(handle)
  }
}

/** A lock: each server's reviewed instructions and tools (`mcp-preamble pin`). */
class Lock {
  constructor(handle) {
    this._native = handle instanceof native.NativeLock ? handle : new native.NativeLock()
  }

  /** Reads a lock file. */
  static load(file) {
    const p = pathText('path', file) ?? ''
    return new Lock(call(() => native.NativeLock.fromPath(p)))
  }

  /** Parses a lock file's text; `origin` names it in errors. */
  static fromJson(textValue, origin = '<lock>') {
    const t = text('text', textValue) ?? ''
    const o = text('origin', origin) ?? '<lock>'
    return new Lock(call(() => native.NativeLock.fromJson(t, o)))
  }

  /** The lock file's text (the same pins give the same bytes). */
  toJson() {
    return this._native.toJson()
  }

  /** Writes the lock file as `mcp-preamble pin` does (the crate's
   * `Lock::save`): one writer at a time (`<file>.pinning`), whole or not at
   * all (a new file beside `file`, renamed into place); a symlink at `file`
   * is replaced itself, never written through; a file keeps its permissions. */
  save(file) {
    const target = pathText('path', file) ?? ''
    call(() => this._native.save(target))
  }

  /** Pins the server as it is now (replacing its pin). */
  pin(server) {
    this._native.pin(natives([server])[0])
  }

  /** Removes a pin; whether there was one. */
  unpin(key) {
    return this._native.unpin(text('key', key) ?? '')
  }

  /** The pinned servers' keys (alias, else server name). */
  keys() {
    return this._native.keys()
  }

  has(key) {
    return this.keys().includes(key)
  }

  /** How `server` compares with its pin: `state` and what changed. */
  check(server) {
    return pinCheck(JSON.parse(this._native.check(natives([server])[0])))
  }
}

/** Lints each server's instructions and tool descriptions, as
 * `mcp-preamble lint` does: the findings of every server, in order.
 * `hosts` (`"all"`, a host name, or several) adds what each host's cut
 * loses (`MCP010`); `maxTokens` is `MCP004`'s limit. */
function lint(servers, options = {}) {
  const { hosts, maxTokens = 400, encoding } = options ?? {}
  const list = hosts === undefined || hosts === null ? undefined : Array.isArray(hosts) ? hosts.join(',') : text('hosts', hosts)
  if (!Number.isInteger(maxTokens) || maxTokens < 0 || maxTokens > 0xffffffff) {
    const got = typeof maxTokens === 'number' ? String(maxTokens) : typeName(maxTokens)
    throw invalid('invalid_config', `max_tokens: expected a whole number, got ${got}`)
  }
  const handles = natives(servers)
  const enc = text('encoding', encoding)
  const results = JSON.parse(call(() => native.lintJson(handles, list, maxTokens, enc)))
  return results.flatMap((s) =>
    s.findings.map((f) => ({
      code: f.code,
      severity: f.severity,
      message: f.message,
      line: f.line ?? null,
      server: f.server,
      excerpt: f.excerpt ?? null,
      tool: f.tool ?? null,
      explanation: f.explanation ?? '',
      fix: f.fix ?? '',
    })),
  )
}

module.exports = {
  Assembler,
  Assembly,
  Lock,
  McpPreambleError,
  Server,
  VERSION: native.VERSION,
  _fromNative: fromNative,
  lint,
}
