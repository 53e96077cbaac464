// @ts-check
// A plain agent loop with the official TypeScript client: two MCP servers
// (tests/servers, run with node; `changing` adds a tool mid-loop), one
// LiveSection, the section in the system prompt of every model request. The "model" is a stand-in that
// calls each tool it has not called yet (no network, no API key); a real
// host sends `system` and `tools` to its model instead.
//
//   node examples/agent-loop.mjs [path to tests/servers]
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { Client } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'

import { Assembler, LiveSection } from '../index.mjs'

const servers = resolve(process.argv[2] ?? fileURLToPath(new URL('../../tests/servers', import.meta.url)))

/** @param {string} script */
async function connect(script) {
  const client = new Client({ name: 'agent-loop-example', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(servers, script)], cwd: servers }))
  return client
}

/**
 * The stand-in model: the first tool it has not called yet, or none, after
 * "thinking" for 300 ms (a model's latency; the servers run meanwhile).
 * @param {string} system
 * @param {Array<{ server: string, name: string }>} tools
 * @param {Set<string>} called
 */
async function model(system, tools, called) {
  await new Promise((done) => setTimeout(done, 300))
  if (!system.includes('## MCP server instructions')) throw new Error('no section in the system prompt')
  return tools.find((t) => !called.has(`${t.server}/${t.name}`)) ?? null
}

const clients = { billing: await connect('invoice.mjs'), changing: await connect('changing.mjs') }
const live = new LiveSection(new Assembler({ budget: 256 }))
try {
  for (const [alias, client] of Object.entries(clients)) await live.add(alias, client)
  const called = new Set()
  for (let turn = 1; turn <= 6; turn++) {
    // Before each model request: the section (re-listed only when a server changed).
    const section = await live.section()
    const system = `You are a billing assistant.\n\n${section.text}`
    const tools = []
    for (const [alias, client] of Object.entries(clients)) {
      for (const tool of (await client.listTools()).tools) tools.push({ server: alias, name: tool.name })
    }
    console.log(`turn ${turn}: section revision ${live.revision}, ${section.totalTokens} tokens, digest ${section.digest.slice(0, 12)}`)
    const call = await model(system, tools, called)
    if (call === null) {
      console.log('the model is done')
      break
    }
    called.add(`${call.server}/${call.name}`)
    const client = clients[/** @type {'billing' | 'changing'} */ (call.server)]
    const result = await client.callTool({ name: call.name, arguments: call.name === 'get_invoice' ? { id: '2026-07-001' } : {} })
    console.log(`  called ${call.server}/${call.name}: ${result.isError ? 'error' : 'ok'}`)
  }
  console.log((await live.section()).text)
} finally {
  await live.close()
  for (const client of Object.values(clients)) await client.close()
}
