/** The store search run in a worker thread (store-search-worker.ts): the same answers, off the event loop. */
import type { Log } from '../log'
import type { NodeSearch } from './node-search'

export interface ClosableSearch extends NodeSearch {
  /** Ends the thread once the queries under way are answered. */
  close(): void
}

/**
 * Where the worker's code is: beside this file when run from source; in the compiled executable, under the
 * path it had below src/ (the build lists it as an entrypoint, scripts/build.ts).
 */
const WORKER = import.meta.url.includes('/$bunfs/')
  ? './search/store-search-worker.ts'
  : new URL('./store-search-worker.ts', import.meta.url).href

/**
 * `path`: the store's file (a :memory: store cannot be shared with a thread). Should the thread fail, `local`
 * (the store search on this thread) answers instead: slower for the event loop, but answers.
 */
export function createThreadedStoreSearch(path: string, local: NodeSearch, log: Log): ClosableSearch {
  const worker = new Worker(WORKER)
  worker.postMessage({ path })
  let failed = false
  worker.onerror = (event) => {
    failed = true
    log.error('search.thread_failed', { error: event.message })
    for (const w of waiting.values()) w.reject(new Error(`the store search thread failed: ${event.message}`))
    waiting.clear()
  }
  let next = 0
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let closing = false
  worker.onmessage = (event: MessageEvent) => {
    const { id, result, error } = event.data as { id: number; result?: unknown; error?: string }
    const w = waiting.get(id)
    waiting.delete(id)
    if (error !== undefined) w?.reject(new Error(error))
    else w?.resolve(result)
    if (closing && !waiting.size) worker.terminate()
  }
  // The thread must not keep the process alive (a stopping server does not wait for it).
  worker.unref()
  const ask = <T>(op: 'find' | 'hostNodeOwner', arg: unknown) =>
    new Promise<T>((resolve, reject) => {
      if (closing) return reject(new Error('the store search thread is closed'))
      const id = next++
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      worker.postMessage({ id, op, arg })
    })
  return {
    find: (q) => (failed ? local.find(q) : ask('find', q)),
    hostNodeOwner: (name) => (failed ? local.hostNodeOwner(name) : ask('hostNodeOwner', name)),
    nodesChanged: async () => {},
    countsChanged: async () => {},
    publishersChanged: async () => {},
    status: () => ({ ready: false, indexed: 0, engine: 'store' }),
    generation: () => 0,
    /** Ends the thread once the queries under way are answered; no new query may come. */
    close() {
      if (closing) return
      closing = true
      if (!waiting.size) worker.terminate()
    },
  }
}
