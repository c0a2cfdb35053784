/** The compiled executable for end-to-end tests: REGISTRY_MIRROR_BIN, else built once per test run. */
import { resolve } from 'node:path'

export const BIN = process.env.REGISTRY_MIRROR_BIN ?? resolve('dist/registry-mirror')

let built: Promise<void> | undefined

/** Builds dist/registry-mirror unless REGISTRY_MIRROR_BIN names one; every test file of a run shares the one build. */
export function ensureBinary(): Promise<void> {
  if (process.env.REGISTRY_MIRROR_BIN) return Promise.resolve()
  built ??= (async () => {
    const build = Bun.spawn(['bun', 'scripts/build.ts'], {
      stdout: 'ignore',
      stderr: 'inherit',
      env: { ...process.env, PATH: `${resolve('node_modules/.bin')}:${process.env.PATH}` },
    })
    if ((await build.exited) !== 0) throw new Error('build failed')
  })()
  return built
}
