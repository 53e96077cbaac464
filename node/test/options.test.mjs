// One contract for bad input in both packages: the Assembler's options, their
// types and the error each bad value throws come from one settings model,
// tests/data/assembler-options.json, which python/tests/test_options.py
// reads too.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

import { Assembler, McpPreambleError } from '../index.mjs'
import { ROOT } from './support/helpers.mjs'

const MODEL = JSON.parse(readFileSync(join(ROOT, 'tests', 'data', 'assembler-options.json'), 'utf8'))

function cases(group) {
  return MODEL.options.flatMap((o) => MODEL.types[o.type][group].map((bad) => [o.js, bad.value, bad.detail.replaceAll('{key}', o.key)]))
}

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  assert.fail('nothing thrown')
}

test('the Assembler takes exactly the options of the model', () => {
  const err = thrown(() => new Assembler({ nope: 1 }))
  const listed = err.detail.slice(err.detail.indexOf('(options: ') + '(options: '.length, -1).split(', ')
  assert.deepEqual(listed.sort(), MODEL.options.map((o) => o.js).sort())
})

for (const [option, value, detail] of [...cases('bad'), ...cases('refused')]) {
  test(`${option}: ${JSON.stringify(value)} is refused`, async () => {
    const err = thrown(() => new Assembler({ [option]: value }))
    assert.ok(err instanceof McpPreambleError, String(err))
    assert.equal(err.kind, 'invalid_config')
    assert.equal(err.detail, detail)
    assert.equal(err.message, `invalid configuration: ${detail}`)
    // The async constructor rejects with the same error, before any work.
    await assert.rejects(Assembler.create({ [option]: value }), (e) => e instanceof McpPreambleError && e.detail === detail)
  })
}

for (const o of MODEL.options.filter((o) => MODEL.types[o.type].good !== null)) {
  test(`${o.js}: a good value is taken`, async () => {
    const good = MODEL.types[o.type].good
    assert.ok(new Assembler({ [o.js]: good }) instanceof Assembler)
    assert.ok((await Assembler.create({ [o.js]: good })) instanceof Assembler)
  })
}

test('a count past 2**53 - 1 is refused as a bigint too; one below is taken', () => {
  assert.equal(thrown(() => new Assembler({ budget: 2n ** 60n })).detail, 'budget: 1152921504606846976 is more than 9007199254740991')
  assert.ok(new Assembler({ budget: 2n ** 53n - 1n }) instanceof Assembler)
})
