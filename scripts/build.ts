/** Compiles src/main.ts into one executable, dist/registry-mirror (schema.sql and the worker threads embedded). */
import { mkdirSync } from 'node:fs'

mkdirSync('dist', { recursive: true })
const result = await Bun.build({
  // A Worker's script must be an entrypoint of its own to be embedded (Bun's docs on standalone executables).
  entrypoints: [
    'src/main.ts',
    'src/archive/inspect-worker.ts',
    'src/search/store-search-worker.ts',
    'src/store/checkpoint-worker.ts',
    'src/store/download-writer-worker.ts',
  ],
  // Flat names put the workers beside main in the executable's file system, where
  // new URL('./inspect-worker.ts', import.meta.url) in src/archive/inspect.ts finds it, as it does from source
  // (and src/search/store-search-thread.ts, src/store/checkpointer.ts and src/store/download-writer.ts their own).
  naming: { entry: '[name].[ext]' },
  // Request headers up to 64 KiB (Bun's default is 16): the node manager asks for every installed pack in one
  // address (`/nodes?node_id=a&node_id=b&...`), 17 KB for 500 packs, and got an empty 431. `npm start` passes the same.
  compile: { outfile: 'dist/registry-mirror', execArgv: ['--max-http-header-size=65536'] },
  minify: true,
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
console.log('built dist/registry-mirror')
