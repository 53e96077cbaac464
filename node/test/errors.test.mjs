// Every error of the crate arrives as a McpPreambleError with its kind, the
// crate's exact message (the CLI's), and its details; no input crashes Node.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { Assembler, Lock, McpPreambleError, Server, lint } from '../index.mjs'
import { CORPUS_DIR, cli, cliError } from './support/helpers.mjs'

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } }
const SEED = join(CORPUS_DIR, 'seed-invoice-server.json')

/** The McpPreambleError `fn` throws, checked to be of `kind`. */
function raised(kind, fn) {
  let err
  assert.throws(fn, (e) => {
    err = e
    return true
  })
  assert.ok(err instanceof McpPreambleError, String(err))
  assert.ok(err instanceof Error)
  assert.equal(err.name, 'McpPreambleError')
  assert.equal(err.kind, kind, err.message)
  return err
}

function tmp() {
  return mkdtempSync(join(tmpdir(), 'mcp-preamble-node-'))
}

test('bad JSON: a capture file, a result, a page', () => {
  const bad = join(tmp(), 'bad.json')
  writeFileSync(bad, '{not json')
  assert.match(raised('invalid_json', () => Server.fromCapture(bad)).message, /^invalid json: /)
  assert.match(raised('invalid_json', () => Server.fromInitialize('{not json')).message, /^invalid json: /)
  const page = raised('invalid_json', () => Server.fromInitialize(INIT, ['{"tools": [', '{}']))
  assert.match(page.message, /^invalid json: tools\/list page 1: /)
  // A value JSON cannot hold never reaches the crate.
  const big = raised('invalid_json', () => Server.fromInitialize({ ...INIT, instructions: 1n }))
  assert.match(big.message, /^invalid json: initialize: /)
  const cyclic = { ...INIT }
  cyclic.self = cyclic
  raised('invalid_json', () => Server.fromInitialize(cyclic))
})

test('a bad capture file gives the CLI\'s message', (t) => {
  const path = cli(t)
  if (!path) return
  const bad = join(tmp(), 'bad.json')
  writeFileSync(bad, '{"initialize": ')
  // The CLI goes on without the file: its row and its stderr line say why.
  const out = spawnSync(path, ['preview', '--json', bad], { encoding: 'utf8' })
  const row = JSON.parse(out.stdout).connections[0]
  const err = raised('invalid_json', () => Server.fromCapture(bad))
  assert.equal(err.message, row.error)
  assert.equal(out.stderr.trim(), `mcp-preamble: ${bad}: ${err.message}`)
})

test('invalid messages and JSON-RPC errors keep their details', () => {
  const msg = raised('invalid_message', () => Server.fromInitialize({ capabilities: {} }, null, { alias: 'a' }))
  assert.equal(msg.message, 'invalid message: initialize result has no protocolVersion')
  const rpc = raised('rpc_error', () =>
    Server.fromDiscover({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }),
  )
  assert.equal(rpc.message, 'json-rpc error response: server/discover failed with -32601: Method not found')
  assert.deepEqual(rpc.rpc, { method: 'server/discover', code: -32601, message: 'Method not found' })
})

test('a missing file is an io error naming it', () => {
  const err = raised('io', () => Server.fromCapture(join(tmp(), 'missing.json')))
  assert.match(err.message, /^cannot read file: .*missing\.json/)
})

test('a template error names the template and the line', () => {
  const template = join(tmp(), 'mine.jinja')
  writeFileSync(template, '{% macro server(s) %}{{ s.name }}\n{{ s.nope.x }}{% endmacro %}\n{% for b in blocks %}{{ b }}{% endfor %}\n')
  const assembler = new Assembler({ template })
  const server = Server.fromInitialize({ ...INIT, instructions: 'Hi.' }, [], { alias: 'a' })
  const err = raised('template', () => assembler.assemble([server]))
  assert.equal(err.template, 'mine.jinja')
  assert.equal(err.line, 2)
})

test('the async variant rejects with the same error', async () => {
  // A template that compiles, and fails on a server's block.
  const template = join(tmp(), 'broken.jinja')
  writeFileSync(template, '{% macro server(s) %}{{ s.nope.x }}{% endmacro %}{% for b in blocks %}{{ b }}{% endfor %}')
  const server = Server.fromInitialize({ ...INIT, instructions: 'Hi.' }, [], { alias: 'a' })
  const assembler = new Assembler({ template })
  const sync = raised('template', () => assembler.assemble([server]))
  await assert.rejects(assembler.assembleAsync([server]), (e) => {
    assert.ok(e instanceof McpPreambleError)
    assert.equal(e.message, sync.message)
    return true
  })
})

// Invalid options and the `preview` flags of the same names: [options, flags, kind].
// (Counts past 2**53 - 1, which the flags take up to the platform's word, and
// options of the wrong type are the packages' own errors: test/options.test.mjs.)
const SAME_AS_THE_CLI = [
  [{ budget: -1 }, ['--budget=-1'], 'invalid_config'],
  [{ totalBudget: -5 }, ['--total-budget=-5'], 'invalid_config'],
  [{ serverBudgets: { x: -1 } }, ['--server-budget=x=-1'], 'invalid_config'],
  [{ deferOver: -1 }, ['--defer-over=-1'], 'invalid_config'],
  [{ budget: 0 }, ['--budget', '0'], 'invalid_config'],
  [{ totalBudget: 0 }, ['--total-budget', '0'], 'invalid_config'],
  [{ serverBudgets: { 'seed-invoice-server': 0 } }, ['--server-budget', 'seed-invoice-server=0'], 'invalid_config'],
  [{ toolNames: 'no-such-host' }, ['--tool-names', 'no-such-host'], 'invalid_config'],
  [{ model: 'no-such-model' }, ['--model', 'no-such-model'], 'unknown_model'],
  [{ model: 'llama-3.1' }, ['--model', 'llama-3.1'], 'invalid_config'],
  [{ encoding: 'no-such-encoding' }, ['--encoding', 'no-such-encoding'], 'unknown_encoding'],
  [{ template: 'no-such-template' }, ['--template', 'no-such-template'], 'unknown_template'],
  [{ tokenizer: 'no-such-tokenizer.json' }, ['--tokenizer', 'no-such-tokenizer.json'], 'io'],
]

test('bad budgets, unknown models and other bad options fail with the CLI\'s message', (t) => {
  const path = cli(t)
  if (!path) return
  for (const [options, flags, kind] of SAME_AS_THE_CLI) {
    const [message, byParser] = cliError(path, flags)
    const err = raised(kind, () => new Assembler(options).assemble([Server.fromCapture(SEED)]))
    if (byParser) {
      // The flag's value parser: its words, after the option's name when the crate's error has none.
      assert.ok(err.message === message || err.message.endsWith(`: ${message}`), `${err.message} / ${message}`)
    } else {
      assert.equal(err.message, message)
    }
  }
})

test('a budget of zero is refused in the policy file too, as the CLI refuses it', (t) => {
  const path = cli(t)
  if (!path) return
  const policy = join(tmp(), 'mcp-preamble.toml')
  for (const [body, where] of [
    ['[defaults]\nbudget = 0\n', '[defaults] budget'],
    ['[servers.billing]\nbudget = 0\n', '[servers.billing] budget'],
  ]) {
    writeFileSync(policy, `version = 1\n${body}`)
    const [message] = cliError(path, ['--policy', policy])
    assert.equal(raised('invalid_config', () => Assembler.fromPolicy(policy)).message, message)
    assert.equal(message, `invalid configuration: ${policy}: ${where} = 0 leaves no room for any text: give 1 or more tokens`)
  }
})

test('policy keys are checked as the policy file checks them', (t) => {
  const path = cli(t)
  if (!path) return
  const policy = join(tmp(), 'mcp-preamble.toml')
  for (const [option, key, value, toml] of [
    ['order', 'order', 'sideways', '"sideways"'],
    ['onChange', 'on_change', 'ignore', '"ignore"'],
    ['similarity', 'similarity', 1.5, '1.5'],
  ]) {
    writeFileSync(policy, `version = 1\n[defaults]\n${key} = ${toml}\n`)
    const [message] = cliError(path, ['--policy', policy])
    const err = raised('invalid_config', () => new Assembler({ [option]: value }))
    const words = err.message.split(`${key}: `)[1]
    assert.ok(words && message.includes(words), `${err.message} / ${message}`)
  }
})

test('the target names its two values; wrong types and unknown options are errors too', () => {
  const target = raised('invalid_config', () => new Assembler({ target: 'sideways' }))
  assert.equal(target.message, 'invalid configuration: target: "sideways" is not "section" or "namespace"')
  assert.equal(raised('invalid_config', () => new Assembler({ budget: '5' })).message, 'invalid configuration: budget: expected an integer, got string')
  assert.equal(raised('invalid_config', () => new Assembler({ budget: 2.5 })).message, 'invalid configuration: budget: expected an integer, got 2.5')
  assert.match(raised('invalid_config', () => new Assembler({ budgett: 5 })).message, /unknown option "budgett"/)
  raised('invalid_config', () => new Assembler().assemble(['not a server']))
  raised('invalid_config', () => new Assembler().assemble(null))
  raised('invalid_config', () => new Assembler({ lock: {} }))
  raised('invalid_config', () => Lock.fromJson('{"version": 99}', 'x.lock'))
  raised('invalid_config', () => lint([Server.fromCapture(SEED)], { hosts: 'no-such-host' }))
})

test('no input crashes the Node process', () => {
  // A child process throws every kind of value at every entry point: each
  // call returns or throws a McpPreambleError, and the process exits 0.
  const script = fileURLToPath(new URL('./support/garbage.mjs', import.meta.url))
  const out = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 120_000 })
  assert.equal(out.signal, null, out.stderr)
  assert.equal(out.status, 0, out.stderr)
  const calls = Number(/calls: (\d+)/.exec(out.stdout)?.[1])
  assert.ok(calls > 1000, out.stdout)
})
