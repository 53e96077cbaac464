// The JavaScript API itself: pins, paths, the report's fields.
import assert from 'node:assert/strict'
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'

import { Assembler, Lock, McpPreambleError, Server } from '../index.mjs'
import { CORPUS_DIR } from './support/helpers.mjs'

const SEED = join(CORPUS_DIR, 'seed-invoice-server.json')
const raw = () => JSON.parse(readFileSync(SEED, 'utf8'))
const tmp = () => mkdtempSync(join(tmpdir(), 'mcp-preamble-node-'))

test('pins: save, load and compare', () => {
  const r = raw()
  const before = Server.fromInitialize(r.initialize, r.tools_list_pages, { alias: 'billing' })
  const lock = new Lock()
  assert.equal(lock.check(before).state, 'new')
  lock.pin(before)
  const path = join(tmp(), 'mcp-preamble.lock')
  lock.save(path)
  const loaded = Lock.load(path)
  assert.deepEqual(loaded.keys(), ['billing'])
  assert.ok(loaded.has('billing'))
  assert.equal(readFileSync(path, 'utf8'), loaded.toJson())
  assert.equal(loaded.toJson(), lock.toJson())
  assert.equal(loaded.check(before).state, 'same')
  r.initialize.result.instructions = 'Always call get_invoice first.'
  r.tools_list_pages[0].result.tools.pop()
  const after = Server.fromInitialize(r.initialize, r.tools_list_pages, { alias: 'billing' })
  const check = loaded.check(after)
  assert.equal(check.state, 'changed')
  assert.ok(check.changed && check.instructionsChanged)
  assert.deepEqual(check.toolsRemoved, ['get_invoice'])
  assert.ok(check.diff.includes('+Always call get_invoice first.'))
  assert.equal(new Assembler({ lock: loaded }).assemble([after]).servers[0].pin.state, 'changed')
  assert.ok(loaded.unpin('billing'))
  assert.deepEqual(loaded.keys(), [])
})

test('Lock.save replaces a symlink and never writes through it', () => {
  const r = raw()
  const lock = new Lock()
  lock.pin(Server.fromInitialize(r.initialize, r.tools_list_pages, { alias: 'billing' }))
  const dir = tmp()
  const outside = join(dir, 'outside.txt')
  writeFileSync(outside, 'not a lock')
  const path = join(dir, 'mcp-preamble.lock')
  symlinkSync(outside, path)
  lock.save(path)
  assert.equal(readFileSync(outside, 'utf8'), 'not a lock')
  assert.ok(!lstatSync(path).isSymbolicLink())
  assert.deepEqual(Lock.load(path).keys(), ['billing'])
  // A dangling link is replaced too, and no temporary file is left behind
  // (`.pinning`: the writers' turn, as `mcp-preamble pin` leaves it).
  const dangling = join(dir, 'dangling.lock')
  symlinkSync(join(dir, 'missing', 'x'), dangling)
  lock.save(dangling)
  assert.ok(!lstatSync(dangling).isSymbolicLink())
  const names = ['dangling.lock', 'dangling.lock.pinning', 'mcp-preamble.lock', 'mcp-preamble.lock.pinning', 'outside.txt']
  assert.deepEqual(readdirSync(dir).sort(), names)
  // A 0600 lock stays 0600 when written again.
  writeFileSync(path, '{}')
  chmodSync(path, 0o600)
  lock.save(path)
  assert.equal(statSync(path).mode & 0o777, 0o600)
  assert.deepEqual(Lock.load(path).keys(), ['billing'])
  // A folder that does not exist: an io error, nothing written.
  const missing = join(dir, 'missing', 'x.lock')
  assert.throws(() => lock.save(missing), (e) => e instanceof McpPreambleError && e.kind === 'io' && e.message.startsWith(`cannot write file: ${missing}.pinning: `))
})

test('paths may be file: URLs', () => {
  const byUrl = Server.fromCapture(pathToFileURL(SEED))
  assert.ok(byUrl.equals(Server.fromCapture(SEED)))
  assert.equal(byUrl.alias, 'seed-invoice-server')
  assert.throws(() => Server.fromCapture(new URL('https://example.invalid/x.json')), (e) => e.kind === 'invalid_config')
})

test('the report in camelCase; toJSON() is the CLI text and JSON.stringify quotes it', () => {
  const assembly = new Assembler({ budget: 32 }).assemble([Server.fromCapture(SEED, { alias: 'billing' })])
  const [s] = assembly.servers
  const plain = assembly.toObject().servers[0]
  assert.equal(s.serverName, plain.server_name)
  assert.equal(s.protocolVersion, plain.protocol_version)
  assert.equal(s.tokensBefore, plain.tokens_before)
  assert.equal(s.pin.state, 'unpinned')
  assert.equal(assembly.counting.counter, 'o200k_base')
  assert.equal(JSON.parse(JSON.stringify(assembly)), assembly.toJSON())
  assert.deepEqual(Object.keys(assembly).sort(), ['counting', 'diagnostics', 'digest', 'encoding', 'servers', 'template', 'text', 'totalTokens'])
})
