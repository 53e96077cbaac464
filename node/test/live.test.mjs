// LiveSection with real servers (tests/servers, npm) through the official
// clients: `@modelcontextprotocol/client` 2.x in both eras and
// `@modelcontextprotocol/sdk` 1.x. A tool added mid-loop appears in the next
// section; a closed client's block leaves with one revision; section() is
// the same object until a server changes.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js'

import { Assembler, LiveSection } from '../index.mjs'
import { nodeServers } from './support/helpers.mjs'

/** A 2.x client of `script`, pinned to an era. */
async function clientV2(dir, script, era) {
  const mode = era === 'modern' ? { pin: '2026-07-28' } : 'legacy'
  const client = new Client({ name: 'node-live-test', version: '1.0.0' }, { versionNegotiation: { mode } })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(dir, script)], cwd: dir }))
  return client
}

/** `live.section()` until `until(section)`, at most 200 times 50 ms apart. */
async function sectionUntil(live, until) {
  for (let i = 0; i < 200; i++) {
    const section = await live.section()
    if (until(section)) return section
    await sleep(50)
  }
  throw new Error('the section never changed')
}

/** The same story for any client: a tool appears, a client closes. */
async function story(live, invoice, changing) {
  const first = await live.section()
  assert.equal(live.revision, 1)
  assert.ok(first.text.includes('### invoice') && first.text.includes('### changing'), first.text)
  assert.ok(first.text.includes('`first`') && !first.text.includes('`second`'), first.text)
  // Nothing changed yet: the very same assembly, no new revision.
  assert.equal(await live.section(), first)
  // `second` is registered 500 ms after the first tools/list: list_changed.
  const grown = await sectionUntil(live, (s) => s.text.includes('`second`'))
  assert.equal(live.revision, 2)
  assert.notEqual(grown.digest, first.digest)
  assert.equal(await live.section(), grown)
  // The host closes a client: its block leaves at once, one revision.
  await invoice.close()
  assert.equal(live.state('invoice'), 'gone')
  const after = await live.section()
  assert.equal(live.revision, 3)
  assert.ok(!after.text.includes('### invoice') && after.text.includes('`second`'), after.text)
  assert.deepEqual([...live.servers.keys()], ['changing'])
  await changing.close()
  const empty = await live.section()
  assert.equal(live.revision, 4)
  assert.equal(empty.servers.length, 0)
}

for (const era of ['legacy', 'modern']) {
  test(`@modelcontextprotocol/client 2.x (${era}): list_changed and close`, async (t) => {
    const dir = nodeServers(t)
    if (!dir) return
    const invoice = await clientV2(dir, 'invoice.mjs', era)
    const changing = await clientV2(dir, 'changing.mjs', era)
    const live = new LiveSection(new Assembler({ budget: 256 }))
    try {
      await live.add('invoice', invoice)
      await live.add('changing', changing)
      assert.equal(live.servers.get('invoice').era, era)
      await story(live, invoice, changing)
    } finally {
      await live.close()
      await invoice.close()
      await changing.close()
    }
  })
}

test('@modelcontextprotocol/sdk 1.x: list_changed and close', async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const live = new LiveSection(new Assembler({ budget: 256 }))
  const invoice = new ClientV1({ name: 'node-live-test', version: '1.0.0' })
  const changing = new ClientV1({ name: 'node-live-test', version: '1.0.0' })
  const transport = (script) => new StdioV1({ command: process.execPath, args: [join(dir, script)], cwd: dir })
  try {
    // The 1.x client keeps no protocol version: connect() records it.
    await live.connect('invoice', invoice, transport('invoice.mjs'))
    await live.connect('changing', changing, transport('changing.mjs'))
    const server = live.servers.get('invoice')
    assert.equal(server.era, 'legacy')
    assert.match(server.protocolVersion, /^\d{4}-\d{2}-\d{2}$/)
    await story(live, invoice, changing)
  } finally {
    await live.close()
    await invoice.close()
    await changing.close()
  }
})

test('a server that exits on its own keeps its block for the grace period', async (t) => {
  const dir = nodeServers(t)
  if (!dir) return
  const live = new LiveSection(new Assembler(), { graceMs: 60_000 })
  const client = new Client({ name: 'node-live-test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(dir, 'exit-after.mjs')],
    cwd: dir,
    // Time to connect and add first, on a loaded machine too.
    env: { ...process.env, EXIT_AFTER_MS: '5000', EXIT_CODE: '0' },
  })
  await client.connect(transport)
  try {
    await live.add('invoice', client)
    const before = await live.section()
    for (let i = 0; i < 400 && live.state('invoice') === 'connected'; i++) await sleep(50)
    assert.equal(live.state('invoice'), 'reconnecting')
    // Kept as it was: the same bytes and revision.
    assert.equal((await live.section()).digest, before.digest)
    assert.equal(live.revision, 1)
    await live.remove('invoice')
    assert.equal(live.state('invoice'), 'gone')
    assert.equal((await live.section()).servers.length, 0)
    assert.equal(live.revision, 2)
  } finally {
    await live.close()
    await client.close()
  }
})
