// @ts-check
// Mastra (`@mastra/core` 1, which needs Node 22.13): the agent's
// `instructions` is a function, called before each run, that returns the
// section. The model is a stand-in written against Mastra's own declaration
// of the AI SDK's model interface (no network, no API key; the `ai` package's
// mock is typed against a newer copy of that interface than Mastra's); it
// answers with the system prompt's server headings, and whether the whole
// section is in it, to show what Mastra sent it.
//
//   node examples/mastra.mjs [path to tests/servers]
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Agent } from '@mastra/core/agent'
import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

import { Assembler, LiveSection } from '../index.mjs'

const servers = resolve(process.argv[2] ?? fileURLToPath(new URL('../../tests/servers', import.meta.url)))

const client = new Client({ name: 'mastra-example', version: '1.0.0' })
await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(servers, 'invoice.mjs')], cwd: servers }))
const live = new LiveSection(new Assembler({ budget: 256 }))

/** @type {import('@mastra/core/llm').MastraModelConfig} */
const model = {
  specificationVersion: 'v4',
  provider: 'example',
  modelId: 'headings',
  supportedUrls: {},
  doGenerate: async ({ prompt }) => {
    // Mastra may send more than one system message: read them all.
    const system = prompt.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n')
    const headings = system.split('\n').filter((line) => line.startsWith('### '))
    const whole = system.includes((await live.section()).text)
    return {
      content: [{ type: 'text', text: `I was told about: ${headings.join(', ')} (the whole section: ${whole})` }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: {
        inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 0, text: 0, reasoning: 0 },
      },
      warnings: [],
    }
  },
  doStream: async () => {
    throw new Error('this example only generates')
  },
}

const agent = new Agent({
  id: 'billing-assistant',
  name: 'billing assistant',
  // Called before each run: a server that changed since the last one is in it.
  instructions: async () => `You are a billing assistant.\n\n${(await live.section()).text}`,
  model,
})

try {
  await live.add('billing', client)
  const result = await agent.generate('What is my last invoice?')
  console.log(result.text)
} finally {
  await live.close()
  await client.close()
}
