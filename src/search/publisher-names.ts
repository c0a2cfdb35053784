/**
 * How many of the documents the index holds carry each name of each publisher. A publisher's name is the one thing
 * of it the index holds: when every document of a publisher carries its current name, a change to the publisher
 * (its description, members, a ban, whose nodes change on their own) needs none of them read again.
 */
export class PublisherNames {
  private readonly counts = new Map<string, Map<string, number>>()
  /** The publisher and name of the document each slot holds (none once removed). */
  private readonly publisherOf: (string | undefined)[] = []
  private readonly nameOf: (string | undefined)[] = []

  /** The slot now holds a document of this publisher under this name, or (undefined) none. */
  hold(slot: number, doc: { publisherId: string; publisherName: string } | undefined): void {
    const publisher = this.publisherOf[slot]
    if (publisher !== undefined) {
      const names = this.counts.get(publisher)!
      const name = this.nameOf[slot]!
      const left = names.get(name)! - 1
      if (left) names.set(name, left)
      else if (names.delete(name) && !names.size) this.counts.delete(publisher)
    }
    this.publisherOf[slot] = doc?.publisherId
    this.nameOf[slot] = doc?.publisherName
    if (!doc) return
    let names = this.counts.get(doc.publisherId)
    if (!names) this.counts.set(doc.publisherId, (names = new Map()))
    names.set(doc.publisherName, (names.get(doc.publisherName) ?? 0) + 1)
  }

  /** Whether every document held of the publisher carries `name` (true when none is held). */
  allCarry(publisherId: string, name: string): boolean {
    const names = this.counts.get(publisherId)
    return !names || (names.size === 1 && names.has(name))
  }
}
