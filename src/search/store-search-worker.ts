/**
 * The store search in a worker thread, with its own read-only handle on the store file: while the index warms,
 * the fallback's table scans (up to seconds each at 100,000 nodes) run here instead of blocking the event loop.
 * Messages: {path} once, then {id, op: 'find' | 'hostNodeOwner', arg}; answers {id, result} or {id, error}; last
 * {close}, answered {closed} once the handle is closed.
 */
import { openStoreReader, type Store } from '../store/db'
import { findHostNodeOwner, queryNodeIds } from '../store/node-query'

declare const self: Worker

let db: Store | undefined

self.onmessage = async (event: MessageEvent) => {
  const msg = event.data as { path?: string; close?: true; id?: number; op?: 'find' | 'hostNodeOwner'; arg?: unknown }
  if (msg.path !== undefined) {
    db = openStoreReader(msg.path)
    return
  }
  if (msg.close) {
    // Closed here rather than left to the thread's end: its memory map goes with it.
    try {
      await db?.destroy()
    } finally {
      self.postMessage({ closed: true })
    }
    return
  }
  try {
    const result =
      msg.op === 'find'
        ? await queryNodeIds(db!, msg.arg as Parameters<typeof queryNodeIds>[1])
        : await findHostNodeOwner(db!, msg.arg as string)
    self.postMessage({ id: msg.id, result })
  } catch (err) {
    self.postMessage({ id: msg.id, error: (err as Error).message })
  }
}
