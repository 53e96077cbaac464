// Run by errors.test.mjs in a child process: every kind of JavaScript value
// at every entry point. Each call must return or throw a McpPreambleError (or
// the error a hostile getter threw itself); anything else, or a crash, fails.
import { Assembler, Lock, McpPreambleError, Server, lint } from '../../index.mjs'
import { CORPUS } from './helpers.mjs'

const seed = Server.fromCapture(CORPUS.find((p) => p.endsWith('seed-invoice-server.json')))
const hostile = new Proxy(
  {},
  {
    get() {
      throw new Error('hostile getter')
    },
    ownKeys() {
      throw new Error('hostile getter')
    },
  },
)
const VALUES = [
  undefined,
  null,
  true,
  0,
  -1,
  2.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  1e308,
  2 ** 53,
  10n ** 40n,
  -(10n ** 40n),
  '',
  'x',
  '\0',
  '{',
  '{}',
  '[]',
  'null',
  '{"result": {"protocolVersion": 5}}',
  '\u202e\ud800',
  'a'.repeat(1 << 16),
  {},
  [],
  [[]],
  [null],
  { tools: 5 },
  { tools: [{}] },
  { tools: [{ name: 5, inputSchema: null }] },
  { result: null },
  { error: { code: 'x' } },
  { protocolVersion: '2025-11-25', capabilities: null, serverInfo: { name: 7 } },
  { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' }, instructions: 5 },
  Symbol('s'),
  () => 1,
  Object.create(null),
  hostile,
  seed,
  [seed, 'x'],
  Buffer.from('{}'),
  new Date(0),
  new URL('file:///nonexistent'),
  '/',
  '/dev/null',
  '/proc/self/mem',
]

const OPTIONS = [
  'budget',
  'totalBudget',
  'deferOver',
  'serverBudgets',
  'deferred',
  'template',
  'encoding',
  'model',
  'tokenizer',
  'toolNames',
  'target',
  'order',
  'dedup',
  'similarity',
  'listToolOnlyServers',
  'toolDescriptions',
  'onChange',
  'lock',
  'policy',
]

let calls = 0
const unexpected = []
function attempt(what, fn) {
  calls++
  try {
    const out = fn()
    if (out && typeof out.then === 'function') out.catch((e) => check(what, e))
  } catch (e) {
    check(what, e)
  }
}
function check(what, e) {
  if (e instanceof McpPreambleError || e?.message === 'hostile getter') return
  unexpected.push(`${what}: ${e?.stack ?? String(e)}`)
}

const assembler = new Assembler({ budget: 64 })
const lock = new Lock()
for (const [i, v] of VALUES.entries()) {
  const at = (name) => `${name}(VALUES[${i}])`
  attempt(at('Server.fromCapture'), () => Server.fromCapture(v))
  attempt(at('Server.fromCapture options'), () => Server.fromCapture(CORPUS[0], v))
  attempt(at('Server.fromInitialize'), () => Server.fromInitialize(v))
  attempt(at('Server.fromInitialize tools'), () => Server.fromInitialize(JSON.parse(JSON.stringify(VALUES[32])), v))
  attempt(at('Server.fromInitialize options'), () => Server.fromInitialize(VALUES[32], [], v))
  attempt(at('Server.fromDiscover'), () => Server.fromDiscover(v, v, v))
  attempt(at('Server.fromSnapshotJson'), () => Server.fromSnapshotJson(v))
  attempt(at('server.withAlias'), () => seed.withAlias(v))
  attempt(at('server.toSnapshotJson'), () => seed.toSnapshotJson(v))
  attempt(at('new Assembler'), () => new Assembler(v))
  for (const key of OPTIONS) {
    attempt(at(`new Assembler ${key}`), () => new Assembler({ [key]: v }).assemble([seed]))
  }
  attempt(at('assemble'), () => assembler.assemble(v))
  attempt(at('assemble list'), () => assembler.assemble([v]))
  attempt(at('assembleAsync'), () => assembler.assembleAsync(v))
  attempt(at('lint'), () => lint(v))
  attempt(at('lint options'), () => lint([seed], v))
  attempt(at('lint hosts'), () => lint([seed], { hosts: v }))
  attempt(at('lint maxTokens'), () => lint([seed], { maxTokens: v }))
  attempt(at('lint encoding'), () => lint([seed], { encoding: v }))
  attempt(at('Lock.fromJson'), () => Lock.fromJson(v, v))
  attempt(at('Lock.load'), () => Lock.load(v))
  attempt(at('lock.pin'), () => lock.pin(v))
  attempt(at('lock.check'), () => lock.check(v))
  attempt(at('lock.unpin'), () => lock.unpin(v))
}

// Let the rejected promises settle before the verdict.
await new Promise((resolve) => setTimeout(resolve, 200))
console.log(`calls: ${calls}`)
if (unexpected.length > 0) {
  console.error(unexpected.slice(0, 20).join('\n\n'))
  process.exit(1)
}
