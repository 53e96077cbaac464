// What the package shares and what does not hold up the event loop: one
// tokenizer file is read once for every assembler of the process (the
// crate's loader counts the reads), `Assembler.create` loads it on libuv's
// thread pool, and a capture given as a FIFO is read once.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'

import { Assembler, Server } from '../index.mjs'
import native from '../native.js'
import { CORPUS, llama3Tokenizer } from './support/helpers.mjs'

test('one tokenizer file, ten assemblers: read once, loaded off the event loop', async (t) => {
  const source = llama3Tokenizer(t)
  if (!source) return
  const dir = mkdtempSync(join(tmpdir(), 'mcp-preamble-tok-'))
  try {
    const path = join(dir, 'tokenizer.json')
    copyFileSync(source, path)
    assert.equal(native.tokenizerFileReads(path), 0)
    // The event loop runs while the first (the one that reads) loads.
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    const first = Assembler.create({ model: 'llama-3.1', tokenizer: path, budget: 64 })
    const ticksAtStart = ticks
    const assemblers = [await first]
    clearInterval(timer)
    assert.equal(ticksAtStart, 0)
    assert.ok(ticks > 0, 'no timer ran while the tokenizer loaded')
    for (let i = 0; i < 5; i++) assemblers.push(await Assembler.create({ model: 'llama-3.1', tokenizer: path, budget: 64 }))
    for (let i = 0; i < 4; i++) assemblers.push(new Assembler({ model: 'llama-3.1', tokenizer: path, budget: 64 }))
    assert.equal(assemblers.length, 10)
    assert.equal(native.tokenizerFileReads(path), 1)
    const server = Server.fromCapture(CORPUS[0])
    assert.equal(new Set(assemblers.map((a) => a.assemble([server]).text)).size, 1)
    // A file that changed is read again, once.
    writeFileSync(path, readFileSync(path, 'utf8') + '\n')
    await Assembler.create({ model: 'llama-3.1', tokenizer: path })
    new Assembler({ model: 'llama-3.1', tokenizer: path })
    assert.equal(native.tokenizerFileReads(path), 2)
    // A file that cannot be read rejects with the constructor's error.
    await assert.rejects(Assembler.create({ tokenizer: join(dir, 'missing.json') }), (e) => e.kind === 'io')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a capture given as a FIFO is read once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-preamble-fifo-'))
  try {
    const fifo = join(dir, 'capture.json')
    if (spawnSync('mkfifo', [fifo]).status !== 0) return t.skip('no mkfifo here')
    // The writer is another process: this one reads (synchronously) meanwhile.
    const text = readFileSync(CORPUS[0], 'utf8')
    const { spawn } = await import('node:child_process')
    const writer = spawn(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(fifo)}, ${JSON.stringify(text)})`])
    const server = Server.fromCapture(fifo, { alias: 'billing' })
    await new Promise((resolve) => writer.on('exit', resolve))
    assert.equal(server.alias, 'billing')
    assert.ok(server.equals(Server.fromCapture(CORPUS[0], { alias: 'billing' })))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
