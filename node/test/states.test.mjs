// LiveSection's state changes for one story, connect, kill, reconnect within
// the grace period, grace expiry, close: the very list
// python/tests/test_states.py asserts for the Python package (both drive the
// crate's Roster). Servers: tests/servers/slow-tool.mjs (its `pid` tool says
// which process to kill), through the official 2.x client.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

import { Assembler, LiveSection } from '../index.mjs'
import { nodeServers } from './support/helpers.mjs'

// The same list as python/tests/test_states.py's EXPECTED.
const EXPECTED = [
  ['billing', 'connected', 'added'],
  ['billing', 'reconnecting', 'connection_lost'],
  ['billing', 'connected', 'connected'],
  ['billing', 'reconnecting', 'connection_lost'],
  ['billing', 'gone', 'grace_expired'],
  ['billing', 'connected', 'added'],
  ['billing', 'gone', 'closed'],
]
// Long enough to start a server again on a loaded machine; the expiry waits it out.
const GRACE_MS = 5000

async function start(dir) {
  const client = new Client({ name: 'node-states-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(dir, 'slow-tool.mjs')], cwd: dir }))
  return client
}

async function kill(client) {
  const pid = Number((await client.callTool({ name: 'pid', arguments: {} })).content[0].text)
  process.kill(pid, 'SIGKILL')
}

async function until(live, state) {
  for (let i = 0; i < 400 && live.state('billing') !== state; i++) await sleep(25)
  assert.equal(live.state('billing'), state)
}

test('connect, kill, reconnect within grace, grace expiry, close: the same state changes as Python', async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const live = new LiveSection(new Assembler(), { graceMs: GRACE_MS })
  const seen = []
  live.on('state', (c) => seen.push([c.alias, c.state, c.reason]))
  const clients = []
  try {
    clients.push(await start(dir))
    await live.add('billing', clients[0])
    const first = await live.section()
    await kill(clients[0])
    await until(live, 'reconnecting')
    clients.push(await start(dir))
    await live.add('billing', clients[1])
    assert.equal(live.state('billing'), 'connected')
    // Back within the grace period with the same snapshot: the same section.
    assert.equal(await live.section(), first)
    await kill(clients[1])
    await until(live, 'reconnecting')
    await until(live, 'gone')
    assert.equal(live.revision, 1)
    assert.equal((await live.section()).servers.length, 0)
    assert.equal(live.revision, 2)
    clients.push(await start(dir))
    await live.add('billing', clients[2])
    await clients[2].close()
    await until(live, 'gone')
    assert.deepEqual(seen, EXPECTED)
  } finally {
    await live.close()
    for (const c of clients) await c.close().catch(() => {})
  }
})
