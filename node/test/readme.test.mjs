// The READMEs' JavaScript snippets run as written (node/README.md, and the
// root README's Node section), importing the package by its name.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { ROOT, nodeServers } from './support/helpers.mjs'

const PACKAGE = fileURLToPath(new URL('..', import.meta.url))

function snippets(path, section) {
  let text = readFileSync(path, 'utf8')
  if (section) {
    const start = text.indexOf(section)
    assert.ok(start >= 0, section)
    const end = text.indexOf('\n## ', start + section.length)
    text = text.slice(start, end === -1 ? undefined : end)
  }
  return [...text.matchAll(/```js\n(.*?)```/gs)].map((m) => m[1])
}

/** Runs `code` as a module inside the package (so `import 'mcp-preamble'`
 * is the package itself), from the repository's root; its stdout. */
function run(code, i) {
  const file = join(PACKAGE, `.readme-snippet-${process.pid}-${i}.mjs`)
  writeFileSync(file, code)
  try {
    const out = spawnSync(process.execPath, [file], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 })
    assert.equal(out.status, 0, out.stderr)
    return out.stdout
  } finally {
    rmSync(file, { force: true })
  }
}

test('node/README.md', (t) => {
  if (!nodeServers(t)) return
  const found = snippets(join(PACKAGE, 'README.md'))
  assert.equal(found.length, 2)
  const offline = run(found[1], 1)
  assert.match(offline, /^billing \d+ -> \d+/m)
  assert.match(offline, /^[0-9a-f]{64}$/m)
  // The live snippet, first on the page: a section with the server, then none, one revision later.
  const live = run(found[0], 0).split('\n')
  assert.match(live[0], /^1 ## MCP server instructions/)
  assert.ok(live.includes('0 2'), live.join('\n'))
})

test("the root README's Node section", () => {
  const found = snippets(join(ROOT, 'README.md'), '## Node')
  assert.equal(found.length, 1)
  assert.match(run(found[0], 2), /### billing/)
})
