// Builds the native module: `node build.mjs [--debug] [--write-dts]`.
//
// `napi build` passes `--target <triple>` to cargo, which puts every crate
// in a folder of its own: the library would be compiled in release a second
// time in CI, after the Python wheel's build. So this runs cargo itself, in
// the same profile, target dir and features of `mcp-preamble` as the wheel
// (python/Cargo.toml), and the library's build is reused; napi-derive
// writes the type definitions as it compiles, and the napi CLI's own
// `generateTypeDef` turns them into native.d.ts, as `napi build` does.
// Without --write-dts a native.d.ts that differs from the Rust side fails.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { generateTypeDef } from '@napi-rs/cli'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..')
const debug = process.argv.includes('--debug')
const write = process.argv.includes('--write-dts')
const target = resolve(process.env.CARGO_TARGET_DIR ?? join(root, 'target'))
const typeDefDir = join(target, 'napi-type-def')

rmSync(typeDefDir, { recursive: true, force: true })
mkdirSync(typeDefDir, { recursive: true })
const args = ['build', ...(process.env.MCP_PREAMBLE_BUILD_VERBOSE ? ['-v'] : ['--quiet']), '-p', 'mcp-preamble-node', ...(debug ? [] : ['--release'])]
const built = spawnSync('cargo', args, {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    NAPI_TYPE_DEF_TMP_FOLDER: typeDefDir,
    // The crate's build script reruns on this: its type definitions are written again.
    NAPI_FORCE_BUILD_MCP_PREAMBLE_NODE: String(Date.now()),
  },
})
if (built.status !== 0) process.exit(built.status ?? 1)

const library = join(target, debug ? 'debug' : 'release', 'libmcp_preamble_node.so')
copyFileSync(library, join(here, 'mcp-preamble.linux-x64-gnu.node'))

const { dts } = await generateTypeDef({ typeDefDir, cwd: here, declareBindingTarget: true })
const dtsPath = join(here, 'native.d.ts')
if (write) {
  writeFileSync(dtsPath, dts)
} else if (readFileSync(dtsPath, 'utf8') !== dts) {
  console.error('node/native.d.ts differs from the Rust side: run `node build.mjs --write-dts` and commit it')
  process.exit(1)
}
