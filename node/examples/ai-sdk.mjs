// @ts-check
// The AI SDK (`ai` 7, which needs Node 22): `instructions:` is the section,
// fresh before each call. The model is the SDK's own mock (no network, no API
// key); it answers with the system prompt's server headings, to show what it
// was sent.
//
//   node examples/ai-sdk.mjs [path to tests/servers]
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { generateText } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'

import { Assembler, LiveSection } from '../index.mjs'

const servers = resolve(process.argv[2] ?? fileURLToPath(new URL('../../tests/servers', import.meta.url)))

const client = new Client({ name: 'ai-sdk-example', version: '1.0.0' })
await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(servers, 'invoice.mjs')], cwd: servers }))
const live = new LiveSection(new Assembler({ budget: 256 }))

const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const system = prompt.find((m) => m.role === 'system')
    const headings = (system?.content ?? '').split('\n').filter((line) => line.startsWith('### '))
    return {
      content: [{ type: 'text', text: `I was told about: ${headings.join(', ')}` }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
      warnings: [],
    }
  },
})

try {
  await live.add('billing', client)
  const section = await live.section()
  const { text } = await generateText({ model, instructions: section.text, prompt: 'What is my last invoice?' })
  console.log(text)
} finally {
  await live.close()
  await client.close()
}
