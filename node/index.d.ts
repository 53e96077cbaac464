// The public API of the `mcp-preamble` npm package (index.js: core.js, session.js).
import type { EventEmitter } from 'node:events'

// The native layer's declarations are generated from the Rust side
// (native.d.ts, by napi-derive); this file declares the JavaScript API
// around them, and `tsc` checks the examples against it in CI.

/** The crate's error kinds, snake_case as in the Python package. */
export type ErrorKind =
  | 'invalid_json'
  | 'invalid_message'
  | 'rpc_error'
  | 'io'
  | 'template'
  | 'unknown_template'
  | 'unknown_encoding'
  | 'unknown_model'
  | 'invalid_tokenizer'
  | 'invalid_config'
  | 'connect'
  | 'timeout'
  | 'drift'
  | 'other'

/** A JSON-RPC error a server answered instead of a result. */
export interface RpcErrorInfo {
  method: string
  code: number
  message: string
}

/** Every error of the package; `message` is the crate's (the CLI's) message, exactly. */
export declare class McpPreambleError extends Error {
  constructor(
    message: string,
    fields?: { kind?: ErrorKind; detail?: string; line?: number | null; template?: string | null; rpc?: RpcErrorInfo | null; cause?: unknown },
  )
  readonly name: 'McpPreambleError'
  readonly kind: ErrorKind
  /** The message without its kind's words. */
  readonly detail: string
  /** A template error's line. */
  readonly line: number | null
  /** A template error's template. */
  readonly template: string | null
  readonly rpc: RpcErrorInfo | null
}

/** JSON as a client hands it over: objects, or JSON text. */
export type Json = string | number | boolean | null | { [key: string]: unknown } | unknown[]

export interface AliasOption {
  /** The host's name for the server: the name the section shows. */
  alias?: string
}

/** What a host knows about one MCP server: its handshake and its tools. */
export declare class Server {
  private constructor()
  /** A capture file (the `tests/corpus/` format) or a snapshot file. */
  static fromCapture(path: string | URL, options?: AliasOption): Server
  /** The `initialize` result (or its JSON-RPC response, or its JSON text) and
   * the tools (a list of tools, a `tools/list` result, or a list of pages). */
  static fromInitialize(result: Json, tools?: Json, options?: AliasOption): Server
  /** The `server/discover` result (2026-07-28 revision); as `fromInitialize`. */
  static fromDiscover(result: Json, tools?: Json, options?: AliasOption): Server
  /** A snapshot file's text. */
  static fromSnapshotJson(text: string): Server
  /** The snapshot file format of `mcp-preamble snapshot`. */
  toSnapshotJson(capturedMs?: number): string
  /** The same server under another alias. */
  withAlias(alias: string): Server
  readonly alias: string | null
  /** The name the section shows: the alias, else `serverInfo.name`. */
  readonly name: string
  readonly serverName: string
  readonly version: string
  /** The instructions as sent (unsanitized), `null` when absent. */
  readonly instructions: string | null
  readonly instructionsState: 'present' | 'blank' | 'absent'
  readonly era: 'legacy' | 'modern'
  readonly protocolVersion: string
  readonly toolNames: string[]
  /** The eras of a capture's other handshake, which `lint` compares with (`MCP015`). */
  readonly otherEras: string[]
  equals(other: unknown): boolean
}

/** A count: an integer (a number or a bigint) up to 2**53 - 1, checked as the CLI checks its flags. */
export type Count = number | bigint

/** The options of `Assembler`: `mcp-preamble preview`'s flags and the policy file's keys. */
export interface AssemblerOptions {
  budget?: Count
  totalBudget?: Count
  /** `"markdown"`, `"xml"` or a template file. */
  template?: string | URL
  encoding?: string
  /** `"gpt-4o"`, `"claude-sonnet-4"`, `"llama-3.1"` (with `tokenizer`)… */
  model?: string
  /** A Hugging Face `tokenizer.json`. */
  tokenizer?: string | URL
  /** `"claude-code"`, `"vscode"`, `"codex"`, `"opencode"`, `"plain"` or a pattern like `"{server}__{tool}"`. */
  toolNames?: string
  serverBudgets?: Record<string, Count>
  deferred?: string | Iterable<string>
  deferOver?: Count
  target?: 'section' | 'namespace'
  order?: 'name' | 'insertion'
  dedup?: boolean
  similarity?: number
  listToolOnlyServers?: boolean
  toolDescriptions?: boolean
  /** A shortened block says so in one line (default on). */
  shorteningNote?: boolean
  onChange?: 'accept' | 'hold' | 'drop' | 'fail'
  lock?: Lock
  /** A policy file (`mcp-preamble.toml`), which the other options override. */
  policy?: string | URL
}

export interface Removal {
  text: string
  reason: 'restates_tool' | 'repeated' | 'same_as_server' | 'budget' | 'policy' | string
  tool: string | null
  server: string | null
}

/** How a server compares with its pin. */
export interface PinCheck {
  state: 'unpinned' | 'new' | 'same' | 'changed'
  instructionsChanged: boolean
  invisibleOnly: boolean
  toolsAdded: string[]
  toolsRemoved: string[]
  toolsRedescribed: string[]
  cutChanged: boolean
  sha256: string | null
  onChange: string | null
  diff: string | null
  changed: boolean
}

/** One server's part of an assembly (the report's fields, camelCase). */
export interface ServerReport {
  name: string
  alias: string | null
  serverName: string
  version: string
  era: string
  protocolVersion: string
  instructions: 'present' | 'blank' | 'absent'
  tools: number
  included: boolean
  /** Exactly the server's block in the section. */
  text: string
  span: [number, number] | null
  budget: number | null
  tokensBefore: number
  tokens: number
  removed: Removal[]
  truncated: boolean
  pin: PinCheck
  diagnostics: Array<{ code: string; message: string; [field: string]: unknown }>
  hiddenCharacters: Record<string, number>
  toolTokens: number | null
  policy: Record<string, unknown> | null
  deferred: Record<string, unknown> | null
  limits: Array<Record<string, unknown>>
  namespace: { text: string; chars: number; maxChars: number; [field: string]: unknown } | null
  [field: string]: unknown
}

/** An assembled section and its report. */
export declare class Assembly {
  private constructor()
  /** The section: what goes into the system prompt. */
  readonly text: string
  /** SHA-256 of `text` (hex): changes exactly when the prompt's bytes do. */
  readonly digest: string
  readonly totalTokens: number
  readonly encoding: string
  readonly template: string
  readonly counting: { counter: string; exact: boolean; [field: string]: unknown }
  readonly servers: ServerReport[]
  readonly diagnostics: Array<{ code: string; message: string; [field: string]: unknown }>
  /** The report, byte for byte what `mcp-preamble preview --json` prints for
   * the same files and settings (JSON text: `JSON.stringify(assembly)`
   * quotes it). */
  toJSON(): string
  /** The report as an object (the `assembly` object of `toJSON()`). */
  toObject(): Record<string, unknown>
}

/** Turns servers into one budgeted, sanitized system-prompt section. */
export declare class Assembler {
  constructor(options?: AssemblerOptions)
  /** As the constructor, loading the settings (a tokenizer file) on libuv's
   * thread pool: the event loop goes on meanwhile. */
  static create(options?: AssemblerOptions): Promise<Assembler>
  static fromPolicy(path: string | URL, options?: AssemblerOptions): Assembler
  /** The section of `servers` (in this order), on this thread. */
  assemble(servers: Iterable<Server>): Assembly
  /** As `assemble`, on libuv's thread pool: the event loop goes on meanwhile. */
  assembleAsync(servers: Iterable<Server>): Promise<Assembly>
}

/** A lock: each server's reviewed instructions and tools (`mcp-preamble pin`). */
export declare class Lock {
  constructor()
  static load(path: string | URL): Lock
  static fromJson(text: string, origin?: string): Lock
  toJson(): string
  /** Writes the lock file whole or not at all. */
  save(path: string | URL): void
  pin(server: Server): void
  unpin(key: string): boolean
  keys(): string[]
  has(key: string): boolean
  check(server: Server): PinCheck
}

/** One lint finding. */
export interface Finding {
  code: string
  severity: 'note' | 'warning' | 'error'
  message: string
  line: number | null
  server: string
  excerpt: string | null
  tool: string | null
  explanation: string
  fix: string
}

export interface LintOptions {
  /** `"all"`, a host name, or several: adds what each host's cut loses (`MCP010`). */
  hosts?: string | string[]
  /** `MCP004`'s limit (400). */
  maxTokens?: number
  encoding?: string
}

/** Lints each server's instructions and tool descriptions, as `mcp-preamble lint` does. */
export declare function lint(servers: Iterable<Server>, options?: LintOptions): Finding[]

/** What `LiveSection` uses of a client: `Client` of `@modelcontextprotocol/client`
 * 2.x or of `@modelcontextprotocol/sdk` 1.x. */
export interface McpClient {
  listTools(params?: { cursor?: string }, options?: object): Promise<{ tools: unknown[]; nextCursor?: string }>
  getServerCapabilities(): object | undefined
  getServerVersion(): object | undefined
  getInstructions(): string | undefined
  close(): Promise<void>
  onclose?: (() => void) | undefined
}

export interface AddOptions {
  /** The handshake result, when the client did not keep it. */
  result?: Json
  protocolVersion?: string
}

/** Where a server stands in a `LiveSection`. */
export type ServerState = 'connected' | 'reconnecting' | 'gone'

/** One change of a server's state (the crate's `StateChange`), the
 * `'state'` event of a `LiveSection`. */
export interface StateChange {
  alias: string
  state: ServerState
  reason: 'added' | 'connected' | 'connection_lost' | 'closed' | 'removed' | 'grace_expired'
  /** The section's revision when it changed. */
  revision: number
}

/** Keeps one section of several live MCP clients current; emits `'state'`
 * with a `StateChange` on each change of a server's state. */
export declare class LiveSection extends EventEmitter {
  constructor(assembler?: Assembler, options?: { graceMs?: number })
  on(event: 'state', listener: (change: StateChange) => void): this
  once(event: 'state', listener: (change: StateChange) => void): this
  off(event: 'state', listener: (change: StateChange) => void): this
  /** Connects `client` over `transport` and adds it (the way for 1.x clients over stdio). */
  connect(alias: string, client: McpClient & { connect(transport: never): Promise<void> }, transport: object, options?: AddOptions): Promise<Server>
  /** Adds (or replaces) a connected client; follows its tools/list_changed and its close. */
  add(alias: string, client: McpClient, options?: AddOptions): Promise<Server>
  /** Removes a server's block at once. */
  remove(alias: string): Promise<void>
  /** The connection ended on its own: the block stays for the grace period. */
  disconnected(alias: string): void
  state(alias: string): ServerState
  markChanged(alias: string): void
  refresh(alias?: string): Promise<void>
  /** The current section; the same object until a server changes. */
  section(): Promise<Assembly>
  /** Every server's state changes from now on, in order (`break` ends it). */
  subscribeStates(): AsyncIterableIterator<StateChange>
  /** Goes up by one each time the section's bytes change. */
  readonly revision: number
  readonly servers: Map<string, Server>
  /** The connected clients by alias. */
  readonly clients: Map<string, McpClient>
  /** Servers `connectConfig` could not connect, by alias. */
  readonly failures: Map<string, McpPreambleError>
  /** Stops following; clients stay the caller's, but those `connectConfig` opened are closed. */
  close(): Promise<void>
  [Symbol.asyncDispose](): Promise<void>
}

export interface ConnectConfigOptions {
  /** Each server's time for its handshake and first `tools/list` (30 000, the CLI's `--timeout 30`). */
  timeoutMs?: number
  /** Servers started at a time (8). */
  concurrency?: number
  /** `"auto"`, `"legacy"` or a 2026 protocol version (the CLI's `--handshake`; 2.x clients). */
  handshake?: string
  /** The `clientInfo` each client sends. */
  clientInfo?: { name: string; version: string }
  /** More options of each client (`capabilities`, …). */
  clientOptions?: object
}

/** Every server of an MCP config (`mcp.json`), connected with the official
 * client and followed in one `LiveSection` (or `assembler`, a LiveSection to
 * add them to). A server that fails is left out: `live.failures` says why. */
export declare function connectConfig(config: string | URL, assembler?: Assembler | LiveSection, options?: ConnectConfigOptions): Promise<LiveSection>

/** A `Server` of a connected client: its handshake and all its tools (listed now). */
export declare function serverOf(client: McpClient, alias: string, options?: AddOptions): Promise<Server>

/** The package's version (the crate's). */
export declare const VERSION: string
