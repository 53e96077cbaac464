// The package's own files require one another without a circle (index.js
// and session.js once required each other): a circle hands a module the
// half-filled exports of another, depending on which was loaded first.
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const PACKAGE = join(dirname(fileURLToPath(import.meta.url)), '..')

/** Each .js/.mjs file of the package and the package files it requires or imports. */
function graph() {
  const files = readdirSync(PACKAGE).filter((f) => /\.(m?js)$/.test(f))
  const edges = new Map()
  for (const file of files) {
    const text = readFileSync(join(PACKAGE, file), 'utf8')
    const used = [...text.matchAll(/(?:require\(|createRequire\([^)]*\)\(|from )\s*'\.\/([^']+)'/g)].map((m) => m[1])
    edges.set(file, used.filter((u) => files.includes(u)))
  }
  return edges
}

/** A circle in `edges`, as the files along it, or null. */
function circle(edges) {
  const state = new Map()
  const visit = (file, path) => {
    if (state.get(file) === 'done') return null
    if (state.get(file) === 'open') return [...path.slice(path.indexOf(file)), file]
    state.set(file, 'open')
    for (const next of edges.get(file) ?? []) {
      const found = visit(next, [...path, file])
      if (found) return found
    }
    state.set(file, 'done')
    return null
  }
  for (const file of edges.keys()) {
    const found = visit(file, [])
    if (found) return found
  }
  return null
}

test('no require circle among the package files', () => {
  const edges = graph()
  assert.deepEqual(edges.get('index.js').sort(), ['connect.js', 'core.js', 'session.js'])
  assert.equal(circle(edges), null)
})

test('the circle finder finds a circle', () => {
  const edges = new Map([['a.js', ['b.js']], ['b.js', ['c.js']], ['c.js', ['a.js']]])
  assert.deepEqual(circle(edges), ['a.js', 'b.js', 'c.js', 'a.js'])
})
