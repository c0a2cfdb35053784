/**
 * Where each node's document was read, and its archive answer then (DocumentPlace), kept in typed arrays: by the
 * search index's slot when there is an index (never given to another node; a node removed and added again gets a new
 * one, and one the index does not hold, not yet warmed or deleted, has no place kept), else by numbers given here. A
 * Map of an object a node held some 10 MiB of the heap at 100,000 nodes, every node's place being known within a
 * minute of traffic across the catalogue; these arrays hold 9 bytes a node.
 */
import type { DocumentPlace } from '../store/node-documents'
import { grown } from '../typed-arrays'

/** A node's slot number, or undefined when it has none (yet). */
export type SlotOf = (id: string) => number | undefined

/** `rows`: no place known (NaN); known, without a row number (-1: PostgreSQL); else the row number. */
const UNKNOWN = Number.NaN
const NO_ROW = -1

export class DocumentPlaces {
  private rows = new Float64Array(0)
  private archived = new Uint8Array(0)
  private readonly slotOf: SlotOf
  /** The slot a place is kept in: the index's, or (without one) a number given here the first time. */
  private readonly slotFor: SlotOf

  /** `slotOf`: the index's slots; without it, each id is numbered here the first time a place is kept. */
  constructor(slotOf?: SlotOf) {
    if (slotOf) this.slotOf = this.slotFor = slotOf
    else {
      const own = new Map<string, number>()
      this.slotOf = (id) => own.get(id)
      this.slotFor = (id) => own.get(id) ?? own.set(id, own.size).size - 1
    }
  }

  get(id: string): DocumentPlace | undefined {
    const slot = this.slotOf(id)
    const row = slot === undefined ? UNKNOWN : (this.rows[slot] ?? UNKNOWN)
    if (Number.isNaN(row)) return undefined
    return { archived: this.archived[slot!] === 1, row: row === NO_ROW ? undefined : row }
  }

  set(id: string, place: DocumentPlace): void {
    const slot = this.slotFor(id)
    if (slot === undefined) return
    if (slot >= this.rows.length) this.grow(slot + 1)
    this.rows[slot] = place.row ?? NO_ROW
    this.archived[slot] = place.archived ? 1 : 0
  }

  delete(id: string): void {
    const slot = this.slotOf(id)
    if (slot !== undefined && slot < this.rows.length) this.rows[slot] = UNKNOWN
  }

  clear(): void {
    this.rows.fill(UNKNOWN)
  }

  private grow(needed: number): void {
    const size = Math.max(needed, 2 * this.rows.length, 1024)
    const from = this.rows.length
    this.rows = grown(this.rows, size)
    this.rows.fill(UNKNOWN, from)
    this.archived = grown(this.archived, size)
  }
}
