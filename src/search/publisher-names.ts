/**
 * How many of the documents the index holds carry each name of each publisher. A publisher's name is the one thing
 * of it the index holds: when every document of a publisher carries its current name, a change to the publisher
 * (its description, members, a ban, whose nodes change on their own) needs none of them read again.
 *
 * Nearly every publisher's documents carry one name: that name and their count are all it keeps (a Map of names for
 * each publisher took 15 MB of the heap at 100,000 nodes). Each slot points at its publisher's record, so that the
 * publisher's id and name are held once, not once a document.
 */
interface Publisher {
  id: string
  /** How many documents held are this publisher's. */
  count: number
  /** The name they all carry, or how many carry each name (two names or more, while documents are re-read). */
  names: string | Map<string, number>
}

export class PublisherNames {
  private readonly publishers = new Map<string, Publisher>()
  /** The publisher of the document each slot holds, and the name it carries (none once removed). */
  private readonly publisherOf: (Publisher | undefined)[] = []
  private readonly nameOf: (string | undefined)[] = []

  /** The slot now holds a document of this publisher under this name, or (undefined) none. */
  hold(slot: number, doc: { publisherId: string; publisherName: string } | undefined): void {
    const before = this.publisherOf[slot]
    if (before) this.release(before, this.nameOf[slot]!)
    this.publisherOf[slot] = undefined
    this.nameOf[slot] = undefined
    if (!doc) return
    let publisher = this.publishers.get(doc.publisherId)
    if (!publisher) this.publishers.set(doc.publisherId, (publisher = { id: doc.publisherId, count: 0, names: doc.publisherName }))
    publisher.count++
    this.publisherOf[slot] = publisher
    this.nameOf[slot] = this.carry(publisher, doc.publisherName)
  }

  /** Whether every document held of the publisher carries `name` (true when none is held). */
  allCarry(publisherId: string, name: string): boolean {
    const publisher = this.publishers.get(publisherId)
    return !publisher || publisher.names === name
  }

  /** Counts one more document of `publisher` (counted already) under `name`; returns the name as held. */
  private carry(publisher: Publisher, name: string): string {
    const { names } = publisher
    if (typeof names === 'string') {
      if (names === name) return names
      // The first document of another name: every other one so far carries the first.
      publisher.names = new Map([
        [names, publisher.count - 1],
        [name, 1],
      ])
      return name
    }
    names.set(name, (names.get(name) ?? 0) + 1)
    return name
  }

  private release(publisher: Publisher, name: string): void {
    if (--publisher.count === 0) {
      this.publishers.delete(publisher.id)
      return
    }
    const { names } = publisher
    if (typeof names === 'string') return
    const left = names.get(name)! - 1
    if (left) names.set(name, left)
    else names.delete(name)
    if (names.size === 1) publisher.names = names.keys().next().value!
  }
}
