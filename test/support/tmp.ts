/** Temporary directories for a test file: make() one, cleanup() all of them (call it in afterEach). */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export function tempDirs(prefix: string) {
  const dirs: string[] = []
  return {
    make(): string {
      const dir = mkdtempSync(join(tmpdir(), `registry-mirror-${prefix}-`))
      dirs.push(dir)
      return dir
    },
    cleanup(): void {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
    },
  }
}
