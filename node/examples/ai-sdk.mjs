// @ts-check
// The AI SDK (`ai`): `system:` is the section, fresh before each call. The
// model is the SDK's own mock (no network, no API key); it answers with the
// system prompt's server headings, to show what it was sent.
//
//   node examples/ai-sdk.mjs [path to tests/servers]
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { generateText } from 'ai'
import { MockLanguageModelV2 } from 'ai/test'

import { Assembler, LiveSection } from '../index.mjs'

const servers = resolve(process.argv[2] ?? fileURLToPath(new URL('../../tests/servers', import.meta.url)))

const client = new Client({ name: 'ai-sdk-example', version: '1.0.0' })
await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(servers, 'invoice.mjs')], cwd: servers }))
const live = new LiveSection(new Assembler({ budget: 256 }))

const model = new MockLanguageModelV2({
  doGenerate: async ({ prompt }) => {
    const system = prompt.find((m) => m.role === 'system')
    const headings = (system?.content ?? '').split('\n').filter((line) => line.startsWith('### '))
    return {
      content: [{ type: 'text', text: `I was told about: ${headings.join(', ')}` }],
      finishReason: 'stop',
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      warnings: [],
    }
  },
})

try {
  await live.add('billing', client)
  const section = await live.section()
  const { text } = await generateText({ model, system: section.text, prompt: 'What is my last invoice?' })
  console.log(text)
} finally {
  await live.close()
  await client.close()
}
