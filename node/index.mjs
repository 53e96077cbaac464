// The ESM entry point: the same classes as the CommonJS one (index.js), so
// `instanceof` holds whichever way a host imports the package.
import { createRequire } from 'node:module'

const cjs = createRequire(import.meta.url)('./index.js')

export const { Assembler, Assembly, LiveSection, Lock, McpPreambleError, Server, VERSION, connectConfig, lint, serverOf } = cjs
export default cjs
