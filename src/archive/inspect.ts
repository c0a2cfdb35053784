/** Checks an uploaded archive off the event loop: the request awaits a verdict from a pool of workers running check.ts within a budget. */
import { availableParallelism } from 'node:os'
import type { Inspection } from './check'
import type { ArchiveLimits } from './entries'
import { InspectionPool } from './worker-pool'

export type { ArchiveFormat, Inspection } from './check'

let shared: InspectionPool | undefined

/**
 * One worker per spare core, at most two: the event loop keeps a core, and each worker's memory stays bounded.
 * In the compiled binary the worker is an entrypoint of its own, flattened next to main (scripts/build.ts), so
 * this URL resolves there as it does from source.
 */
function sharedPool(): InspectionPool {
  shared ??= new InspectionPool({
    workerUrl: new URL('./inspect-worker.ts', import.meta.url),
    size: Math.max(1, Math.min(2, availableParallelism() - 1)),
    graceMs: 1_000,
    idleMs: 30_000,
  })
  return shared
}

export function inspectArchive(path: string, limits: ArchiveLimits): Promise<Inspection> {
  return sharedPool().run(path, limits)
}
