// Builds the native module: `node build.mjs [--debug] [--write-dts] [--target TRIPLE] [--zig] [--strip]`.
//
// `napi build` runs cargo with options of its own: the library would be
// compiled in release a second time in CI, after the Python wheel's build.
// So this runs cargo itself, in the same profile, target (scripts/dist:
// `--target x86_64-unknown-linux-gnu`, and the wheel's linker), target dir and features of
// `mcp-preamble` as the wheel (python/Cargo.toml), and the library's build
// is reused; napi-derive
// writes the type definitions as it compiles, and the napi CLI's own
// `generateTypeDef` turns them into native.d.ts, as `napi build` does.
// Without --write-dts a native.d.ts that differs from the Rust side fails.
//
// `--target TRIPLE --zig` builds with cargo-zigbuild (PyPI `cargo-zigbuild`
// and `ziglang`; the release workflow's other Linux targets): with
// `aarch64-unknown-linux-gnu.2.17` the module is linked against glibc 2.17's
// symbols and loads on RHEL 7/8, Ubuntu 18.04/20.04 and Amazon Linux 2.
// scripts/dist links x86_64 the same way, through the wheel's linker
// (scripts/zigcc-glibc2.17), and checks it. `--strip` drops the symbols and debug info
// (17 MB of the module came from the standard library's debug info).
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

import { generateTypeDef, parseTriple } from '@napi-rs/cli'

const here = dirname(fileURLToPath(import.meta.url))
const root = resolve(here, '..')
const debug = process.argv.includes('--debug')
const write = process.argv.includes('--write-dts')
const zig = process.argv.includes('--zig')
const strip = process.argv.includes('--strip')
const targetAt = process.argv.indexOf('--target')
const triple = targetAt === -1 ? null : process.argv[targetAt + 1]
const target = resolve(process.env.CARGO_TARGET_DIR ?? join(root, 'target'))
const typeDefDir = join(target, 'napi-type-def')

rmSync(typeDefDir, { recursive: true, force: true })
mkdirSync(typeDefDir, { recursive: true })
const args = [
  zig ? 'zigbuild' : 'build',
  ...(process.env.MCP_PREAMBLE_BUILD_VERBOSE ? ['-v'] : ['--quiet']),
  '-p',
  'mcp-preamble-node',
  ...(debug ? [] : ['--release']),
  ...(triple ? ['--target', triple] : []),
  // This package's cdylib only: the library's release build stays the one the wheel reuses.
  ...(strip ? ['--config', 'profile.release.package.mcp-preamble-node.strip="symbols"'] : []),
]
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

// The platform's name as napi-rs's loader (native.js) and npm packages spell it.
const { platform, platformArchABI } = parseTriple(triple ?? hostTriple())
const library = { win32: 'mcp_preamble_node.dll', darwin: 'libmcp_preamble_node.dylib' }[platform] ?? 'libmcp_preamble_node.so'
// cargo-zigbuild's glibc suffix (`.2.17`) is not part of cargo's folder name.
const dir = triple ? join(target, triple.replace(/\.[0-9.]+$/, '')) : target
const addon = `mcp-preamble.${platformArchABI.replace(/\.[0-9.]+$/, '')}.node`
copyFileSync(join(dir, debug ? 'debug' : 'release', library), join(here, addon))

function hostTriple() {
  const rustc = spawnSync('rustc', ['-vV'], { encoding: 'utf8' })
  return /^host: (.+)$/m.exec(rustc.stdout)[1]
}

const { dts } = await generateTypeDef({ typeDefDir, cwd: here, declareBindingTarget: true })
const dtsPath = join(here, 'native.d.ts')
if (write) {
  writeFileSync(dtsPath, dts)
} else if (readFileSync(dtsPath, 'utf8') !== dts) {
  console.error('node/native.d.ts differs from the Rust side: run `node build.mjs --write-dts` and commit it')
  process.exit(1)
}
