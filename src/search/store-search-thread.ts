/** The store search run in a worker thread (store-search-worker.ts): the same answers, off the event loop. */
import type { Log } from '../log'
import type { NodeSearch } from './node-search'

export interface ClosableSearch extends NodeSearch {
  /** Starts the thread now rather than with the first question (it takes a few hundred milliseconds to answer). */
  prepare(): void
  /** Ends the thread once the queries under way are answered. */
  close(): void
}

/** Beside this file from source; beside main in the executable (an entrypoint of the build, named flat: scripts/build.ts). */
const WORKER = new URL('./store-search-worker.ts', import.meta.url).href

type Waiting = { resolve: (v: unknown) => void; reject: (e: Error) => void }

/**
 * `path`: the store's file (a :memory: store cannot be shared with a thread). The thread starts with the first
 * question, or when the index says its warm-up will be long (prepare), so a server whose index is ready before
 * anyone asks never starts it. Should it fail, `local` (the store search on this thread) answers instead: slower
 * for the event loop, but answers.
 */
export function createThreadedStoreSearch(path: string, local: NodeSearch, log: Log): ClosableSearch {
  let worker: Worker | undefined
  let failed = false
  let closing = false
  let next = 0
  const waiting = new Map<number, Waiting>()

  function start(): Worker {
    const w = new Worker(WORKER)
    w.postMessage({ path })
    w.onerror = (event) => {
      failed = true
      log.error('search.thread_failed', { error: event.message })
      for (const q of waiting.values()) q.reject(new Error(`the store search thread failed: ${event.message}`))
      waiting.clear()
      // Nothing more is asked of a failed thread (its handle and map go with it).
      w.terminate()
    }
    w.onmessage = (event: MessageEvent) => {
      const { id, result, error, closed } = event.data as { id: number; result?: unknown; error?: string; closed?: true }
      if (closed) return w.terminate()
      const q = waiting.get(id)
      waiting.delete(id)
      if (error !== undefined) q?.reject(new Error(error))
      else q?.resolve(result)
      if (closing && !waiting.size) w.postMessage({ close: true })
    }
    // The thread must not keep the process alive (a stopping server does not wait for it).
    w.unref()
    return w
  }

  const ask = <T>(op: 'find' | 'hostNodeOwner', arg: unknown) =>
    new Promise<T>((resolve, reject) => {
      if (closing) return reject(new Error('the store search thread is closed'))
      worker ??= start()
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
    prepare() {
      if (!closing && !failed) worker ??= start()
    },
    /** Ends the thread once the queries under way are answered; no new query may come. */
    close() {
      if (closing) return
      closing = true
      if (worker && !waiting.size) worker.postMessage({ close: true })
    },
  }
}
