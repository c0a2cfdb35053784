/** Compiles src/main.ts into one executable, dist/registry-mirror (schema.sql embedded). */
import { mkdirSync } from 'node:fs'

mkdirSync('dist', { recursive: true })
const result = await Bun.build({
  // The worker threads' entrypoints too: the executable carries each one (see src/search/store-search-thread.ts).
  entrypoints: ['src/main.ts', 'src/search/store-search-worker.ts'],
  compile: { outfile: 'dist/registry-mirror' },
  minify: true,
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log('built dist/registry-mirror')
