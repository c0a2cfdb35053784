/**
 * A publisher deleted or banned by one process while another puts a node into it, on one SQLite file: the file has
 * one writer at a time, so the second write waits for the first; what the second read before its transaction (the
 * publisher, live) may be out of date by then, and it reads the publisher again inside. Without that, a publish, a
 * node's creation or a claim that had waited for a delete or a ban put a live node under the deleted publisher (an
 * active one under the banned publisher).
 */
import { afterEach, describe } from 'bun:test'
import { publisherRaceTests } from '../support/publisher-race'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

describe('a publisher deleted or banned while another process puts a node into it (SQLite file)', () => {
  publisherRaceTests('sqlite', cleanups)
})
