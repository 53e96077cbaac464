// The examples run as a user runs them (no network, no API key), against
// the repository's test servers; those of the AI SDK and Mastra on the Node 22
// their current majors need.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { node22, nodeServers } from './support/helpers.mjs'

function run(example, servers, node = process.execPath) {
  const script = fileURLToPath(new URL(`../examples/${example}`, import.meta.url))
  const out = spawnSync(node, [script, servers], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(out.status, 0, out.stderr)
  return out.stdout
}

test('the agent loop: a tool added mid-loop reaches the next section, and the model calls it', (t) => {
  const servers = nodeServers(t)
  if (!servers) return
  const out = run('agent-loop.mjs', servers)
  assert.match(out, /^turn 1: section revision 1,/m)
  assert.match(out, /section revision 2,/)
  assert.match(out, /called changing\/second: ok/)
  assert.match(out, /the model is done/)
  assert.match(out, /### billing\n\nAlways call list_periods before get_invoice/)
  assert.match(out, /Tools: `first`, `second`/)
})

test('the AI SDK: instructions is the section', (t) => {
  const servers = nodeServers(t)
  const node = servers && node22(t)
  if (!node) return
  assert.equal(run('ai-sdk.mjs', servers, node).trim(), 'I was told about: ### billing')
})

test('Mastra: the agent instructions function returns the section, and the model gets it', (t) => {
  const servers = nodeServers(t)
  const node = servers && node22(t)
  if (!node) return
  assert.equal(run('mastra.mjs', servers, node).trim(), 'I was told about: ### billing (the whole section: true)')
})
