/**
 * How a page of nodes is best handed to Bun: each server (a process of its own) answers every request with a page of
 * 30 node texts made the way the node JSON cache makes them (a count before a tail built by concatenation, so ropes),
 * from the real packs, and sends it as the registry does (one string: `pageText`, `jsonText`), as a Blob of the
 * parts, or (the yardstick) as `{}`. Reports each one's rate and server CPU per request, in turns in one run.
 * Run: bun scripts/bench/page-body.ts [--seconds 4] [--rounds 3]
 */
import { parseArgs } from 'node:util'
import { REAL_NODES } from '../../test/support/seed'
import { jsonText } from '../../src/http/json-body'
import { pageText } from '../../src/services/node-lists'
import { runLoad } from './load'
import { cpuSeconds, spawnListening } from './server'

const WAYS = ['registry', 'blob', 'bare'] as const
type Way = (typeof WAYS)[number]

/**
 * The tails of the real packs as the cache holds them (the JSON after the count, some 800 bytes, made by
 * concatenation): their own texts in the fields of a node document, the rest as a typical pack has them.
 */
function tails(): string[] {
  return REAL_NODES.map(({ host_nodes: _hostNodes, ...pack }) => {
    const node = {
      ...pack,
      license: '{"file": "LICENSE"}',
      supported_os: ['OS Independent'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
      status: 'NodeStatusActive',
      created_at: '2024-05-01T12:00:00.000Z',
    }
    let tail = `,${JSON.stringify(node).slice(1, -1)}`
    tail += `,"publisher":${JSON.stringify({ id: pack.publisher, name: pack.publisher, members: [] })}`
    const version = { id: '0b7ee1a2-5cbf-4a3f-9d8e-3f2b1c4d5e6f', version: '1.0.0', changelog: '', status: 'NodeVersionStatusActive' }
    tail += `,"latest_version":${JSON.stringify(version).slice(0, -1)},"downloadUrl":${JSON.stringify(`http://127.0.0.1:4000/archives/${pack.id}/1.0.0.zip`)}}`
    return `${tail}}`
  })
}

function serve(way: Way) {
  const all = tails()
  let next = 0
  /** The node texts of a page, as the cache hands them out: the count written before the tail. */
  const nodes = () =>
    Array.from({ length: 30 }, () => {
      next = (next + 1) % all.length
      return `{"downloads":${next}${all[next]}`
    })
  const meta = { page: 1, limit: 30, total: all.length }
  const blobParts = (texts: string[]) => ['{"nodes":[', ...texts.flatMap((t, i) => (i ? [',', t] : [t])), `],"page":1,"limit":30}`]
  const headers = { 'content-type': 'application/json' }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      way === 'registry'
        ? jsonText(pageText(nodes(), meta))
        : way === 'blob'
          ? new Response(new Blob(blobParts(nodes())), { headers })
          : new Response('{}', { headers }),
  })
  console.log(`listening on ${server.url.href.replace(/\/$/, '')}`)
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { serve: { type: 'string' }, seconds: { type: 'string', default: '4' }, rounds: { type: 'string', default: '3' } },
  })
  if (values.serve) serve(values.serve as Way)
  else {
    const servers = await Promise.all(
      WAYS.map(async (way) => ({ way, ...(await spawnListening([process.execPath, import.meta.path, '--serve', way], '/dev/null')) })),
    )
    try {
      console.log(`a page of 30 node texts of the real packs, 8 clients, ${values.seconds} s a run, in turns`)
      for (let round = 1; round <= Number(values.rounds); round++) {
        const line: string[] = []
        let bare = 0
        for (const { way, url, proc } of [...servers].reverse()) {
          const before = cpuSeconds(proc.pid)
          const run = await runLoad(url, { clients: 8, seconds: Number(values.seconds), next: () => ({ path: '/' }) })
          const us = ((cpuSeconds(proc.pid) - before) * 1e6) / run.requests
          if (way === 'bare') bare = run.perSecond
          line.push(
            `${way} ${run.perSecond.toFixed(0)}/s${bare && way !== 'bare' ? ` (${((run.perSecond / bare) * 100).toFixed(0)}% of bare)` : ''}, ${us.toFixed(0)} µs CPU`,
          )
        }
        console.log(`  round ${round}: ${line.join('; ')}`)
      }
    } finally {
      for (const { proc } of servers) proc.kill()
    }
  }
}
