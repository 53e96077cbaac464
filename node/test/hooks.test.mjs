// LiveSection never takes the host's hooks away: the host's
// tools/list_changed handler and onclose, set before or after `add` or
// `connect`, run every time, and the section follows the same notifications
// and the same close, with `@modelcontextprotocol/client` 2.x (both eras) and
// `@modelcontextprotocol/sdk` 1.x clients.
// Servers: tests/servers/changing.mjs (EXTRA_TOOLS: three more
// tools/list_changed after the first), slow-tool.mjs (killed).
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js'
import { LATEST_PROTOCOL_VERSION, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'

import { Assembler, LiveSection } from '../index.mjs'
import { nodeServers } from './support/helpers.mjs'

const CHANGED = 'notifications/tools/list_changed'
// `second`, then extra1..extra3: four notifications.
const NOTIFICATIONS = 4

const KINDS = {
  'client 2.x (legacy)': { v2: true, mode: 'legacy' },
  'client 2.x (modern)': { v2: true, mode: { pin: '2026-07-28' } },
  'sdk 1.x': { v2: false },
}

/** A client of `script`, not connected yet, and its transport. */
function unconnected(dir, kind, script, env = {}) {
  const params = { command: process.execPath, args: [join(dir, script)], cwd: dir, env: { ...process.env, ...env } }
  if (!kind.v2) return { client: new ClientV1({ name: 'node-hooks-test', version: '1.0.0' }), transport: new StdioV1(params) }
  const client = new Client({ name: 'node-hooks-test', version: '1.0.0' }, { versionNegotiation: { mode: kind.mode } })
  return { client, transport: new StdioClientTransport(params) }
}

/** A client of `script` the host connects itself (never through live.connect). */
async function connected(dir, kind, script, env = {}) {
  const { client, transport } = unconnected(dir, kind, script, env)
  await client.connect(transport)
  return client
}

/** The host's own tools/list_changed handler, as each SDK takes it. */
function onChanged(client, kind, handler) {
  if (kind.v2) client.setNotificationHandler(CHANGED, handler)
  else client.setNotificationHandler(ToolListChangedNotificationSchema, handler)
}

async function until(what, check) {
  for (let i = 0; i < 400; i++) {
    if (check()) return
    await sleep(25)
  }
  assert.fail(`never: ${what}`)
}

// `add` takes a client the host connected; `connect` connects the host's
// client (hooks set before it are set on a client not yet connected).
const WAYS = [
  ['before', 'add'],
  ['after', 'add'],
  ['before', 'connect'],
  ['after', 'connect'],
]

for (const [name, kind] of Object.entries(KINDS)) {
  for (const [when, how] of WAYS) {
    test(`${name}: the host's tools/list_changed handler and onclose set ${when} ${how} all run`, async (t) => {
      const dir = nodeServers(t)
      if (!dir) return
      const made = unconnected(dir, kind, 'changing.mjs', { EXTRA_TOOLS: '3' })
      const { client } = made
      const live = new LiveSection(new Assembler({ budget: 512 }))
      const seen = { changed: 0, closed: 0 }
      const hooks = () => {
        onChanged(client, kind, () => void seen.changed++)
        client.onclose = () => void seen.closed++
      }
      try {
        if (how === 'add') await client.connect(made.transport)
        if (when === 'before') hooks()
        // A 1.x client the host connected itself: no option needed.
        const server = how === 'add' ? await live.add('changing', client) : await live.connect('changing', client, made.transport)
        assert.equal(server.era, kind.mode?.pin ? 'modern' : 'legacy')
        if (!kind.v2) assert.equal(server.protocolVersion, LATEST_PROTOCOL_VERSION)
        if (when === 'after') hooks()
        // The section follows every change, and the host's handler saw each.
        let section
        await until('the last tool in the section', () => seen.changed === NOTIFICATIONS)
        for (let i = 0; i < 200 && !(section = await live.section()).text.includes('`extra3`'); i++) await sleep(25)
        assert.ok(section.text.includes('`second`') && section.text.includes('`extra3`'), section.text)
        assert.equal(seen.changed, NOTIFICATIONS)
        // The host closes it: its onclose runs once, the block leaves at once.
        await client.close()
        assert.equal(seen.closed, 1)
        assert.equal(live.state('changing'), 'gone')
        assert.equal((await live.section()).servers.length, 0)
      } finally {
        await live.close()
        await client.close().catch(() => {})
      }
    })
  }
}

test("a host onclose that calls the one it found runs once, and so does the section's", async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const client = await connected(dir, KINDS['client 2.x (legacy)'], 'invoice.mjs')
  const live = new LiveSection(new Assembler())
  const states = []
  live.on('state', (c) => states.push(c.reason))
  let calls = 0
  try {
    await live.add('invoice', client)
    const found = client.onclose
    client.onclose = (...args) => {
      calls++
      found?.(...args)
    }
    await client.close()
    assert.equal(calls, 1)
    assert.deepEqual(states, ['added', 'closed'])
    // Removed from the section: the host's handler is the client's again.
    await live.close()
    assert.equal(Object.getOwnPropertyDescriptor(client, 'onclose').get, undefined)
  } finally {
    await live.close()
  }
})

for (const [name, kind] of Object.entries(KINDS)) {
  test(`${name}: a killed server goes reconnecting, then gone, with the host's onclose set after add`, async (t) => {
    const dir = nodeServers(t)
    if (!dir) return
    const client = await connected(dir, kind, 'slow-tool.mjs')
    const live = new LiveSection(new Assembler(), { graceMs: 400 })
    const states = []
    live.on('state', (c) => states.push([c.state, c.reason]))
    let closed = 0
    try {
      await live.add('billing', client)
      client.onclose = () => void closed++
      const pid = Number((await client.callTool({ name: 'pid', arguments: {} })).content[0].text)
      process.kill(pid, 'SIGKILL')
      await until('reconnecting', () => live.state('billing') !== 'connected')
      assert.equal(closed, 1)
      await until('gone', () => live.state('billing') === 'gone')
      assert.deepEqual(states, [
        ['connected', 'added'],
        ['reconnecting', 'connection_lost'],
        ['gone', 'grace_expired'],
      ])
      assert.equal((await live.section()).servers.length, 0)
    } finally {
      await live.close()
      await client.close().catch(() => {})
    }
  })
}

test('subscribeStates: every change from now on, in order, until return()', async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const live = new LiveSection(new Assembler())
  const changes = live.subscribeStates()
  const client = await connected(dir, KINDS['client 2.x (legacy)'], 'invoice.mjs')
  try {
    await live.add('invoice', client)
    await client.close()
    const got = []
    for await (const change of changes) {
      got.push([change.alias, change.state, change.reason])
      if (got.length === 2) break
    }
    assert.deepEqual(got, [
      ['invoice', 'connected', 'added'],
      ['invoice', 'gone', 'closed'],
    ])
    assert.equal(live.listenerCount('state'), 0)
  } finally {
    await live.close()
  }
})

test("re-listing a client whose connection is gone: reconnecting, not the SDK's raw error", async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const client = await connected(dir, KINDS['client 2.x (legacy)'], 'invoice.mjs')
  const live = new LiveSection(new Assembler(), { graceMs: 60_000 })
  try {
    await live.add('invoice', client)
    const first = await live.section()
    // An error the server answered is the host's to see.
    const list = client.listTools
    client.listTools = async () => {
      throw Object.assign(new Error('boom'), { code: -32603 })
    }
    live.markChanged('invoice')
    await assert.rejects(live.section(), /boom/)
    assert.equal(live.state('invoice'), 'connected')
    client.listTools = list
    // As the 2.x SDK throws when the transport is gone before onclose ran.
    client.listTools = async () => {
      throw Object.assign(new Error('Not connected'), { code: 'NOT_CONNECTED' })
    }
    live.markChanged('invoice')
    assert.equal(await live.section(), first)
    assert.equal(live.state('invoice'), 'reconnecting')
  } finally {
    await live.close()
    await client.close().catch(() => {})
  }
})
