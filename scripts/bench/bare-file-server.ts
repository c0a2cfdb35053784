/**
 * The yardstick of the archive benchmark: a bare Bun.serve answering GET /<sha256> with Bun.file of that blob
 * in the blob directory given, nothing else. Prints its URL on its first line, like `serve` does.
 * Run by scripts/bench/archives.ts: bun scripts/bench/bare-file-server.ts BLOB_DIR
 */
import { join } from 'node:path'

const dir = Bun.argv[2]
if (!dir) throw new Error('usage: bun scripts/bench/bare-file-server.ts BLOB_DIR')
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req) {
    const sha = new URL(req.url).pathname.slice(1)
    return new Response(Bun.file(join(dir, sha.slice(0, 2), sha.slice(2, 4), sha)))
  },
})
console.log(`listening on ${server.url.href.replace(/\/$/, '')}`)
process.on('SIGTERM', () => {
  server.stop(true)
  process.exit(0)
})
