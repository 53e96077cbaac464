// connectConfig against the repository's test servers (tests/servers): stdio
// and Streamable HTTP entries of one config, the section the CLI's
// `preview --config` makes of the same config, a server that fails, one that
// never answers, and every connection closed by live.close(). The Python
// package's tests/test_connect.py tells the same story.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { test } from 'node:test'

import { Assembler, LiveSection, McpPreambleError, connectConfig } from '../index.mjs'
import { cli, nodeServers, runCli } from './support/helpers.mjs'

/** The invoice server over Streamable HTTP (http.mjs on an ephemeral port): its URL and its process. */
async function httpServer(dir) {
  const proc = spawn(process.execPath, [join(dir, 'http.mjs'), '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] })
  const [line] = await createInterface({ input: proc.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value])
  assert.match(line, /^listening /)
  return { url: line.split(' ')[1], proc }
}

function config(dir, entries) {
  const folder = mkdtempSync(join(tmpdir(), 'mcp-preamble-connect-'))
  const path = join(folder, 'mcp.json')
  writeFileSync(path, JSON.stringify({ mcpServers: entries }))
  return { path, folder }
}

test('every server of a config in one LiveSection, as the CLI makes it', async (t) => {
  const dir = nodeServers(t)
  const bin = dir && cli(t)
  if (!bin) return
  const { url, proc } = await httpServer(dir)
  const { path, folder } = config(dir, {
    billing: { command: 'node', args: [join(dir, 'invoice.mjs')], cwd: dir },
    spaces: { command: 'node', args: ['whitespace.mjs'], cwd: dir },
    remote: { url },
    broken: { command: 'node', args: [join(dir, 'exit-during-handshake.mjs')] },
  })
  let live
  try {
    const expected = JSON.parse(runCli(bin, ['preview', '--json', '--budget', '120', '--config', path])).assembly
    live = await connectConfig(path, new Assembler({ budget: 120 }), { timeoutMs: 20_000 })
    assert.ok(live instanceof LiveSection)
    assert.deepEqual([...live.clients.keys()].sort(), ['billing', 'remote', 'spaces'])
    assert.equal(live.state('broken'), 'gone')
    const section = await live.section()
    assert.equal(section.text, expected.text)
    assert.deepEqual(
      section.servers.map((s) => [s.name, s.tokens]),
      expected.servers.map((s) => [s.name, s.tokens]),
    )
    // The connections are the host's to use.
    const answer = await live.clients.get('billing').callTool({ name: 'list_periods', arguments: {} })
    assert.equal(answer.content[0].text, '2026-07, 2026-08')
    const failure = live.failures.get('broken')
    assert.ok(failure instanceof McpPreambleError && failure.kind === 'connect', String(failure))
    assert.match(failure.message, /^cannot connect: server "broken": .*fatal: config missing/)
    // Closing closes every connection it opened: each block went with it.
    await live.close()
    for (const alias of ['billing', 'remote', 'spaces']) assert.equal(live.state(alias), 'gone')
    assert.equal(live.servers.size, 0)
  } finally {
    await live?.close()
    proc.kill()
    rmSync(folder, { recursive: true, force: true })
  }
})

test('a server that never answers times out alone; a config the CLI refuses is refused with its message', async (t) => {
  const dir = nodeServers(t)
  const bin = dir && cli(t)
  if (!bin) return
  const { path, folder } = config(dir, {
    silent: { command: 'node', args: [join(dir, 'never-answers.mjs')] },
    billing: { command: 'node', args: [join(dir, 'invoice.mjs')] },
  })
  try {
    // Long enough for billing to start on a loaded machine (CI runs this beside
    // the Rust tests); silent still times out alone.
    const live = await connectConfig(path, undefined, { timeoutMs: 8000 })
    try {
      assert.ok((await live.section()).text.includes('### billing'))
      const failure = live.failures.get('silent')
      assert.equal(failure.kind, 'timeout')
      assert.equal(failure.message, 'timed out: server "silent": no answer within the timeout')
    } finally {
      await live.close()
    }
    writeFileSync(path, JSON.stringify({ mcpServers: { x: { command: 'node', args: 'not a list' } } }))
    const err = await connectConfig(path).catch((e) => e)
    assert.ok(err instanceof McpPreambleError && err.kind === 'invalid_config', String(err))
    assert.equal(err.message, `invalid configuration: ${path}: server "x": "args" must be an array of strings`)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
})
