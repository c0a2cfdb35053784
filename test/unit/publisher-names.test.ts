/** Which publishers' documents all carry one name (the index reads a publisher's nodes again only when some do not). */
import { expect, test } from 'bun:test'
import { PublisherNames } from '../../src/search/publisher-names'
import { seededRandom } from '../../scripts/bench/random'

test('a publisher whose documents carry two names carries neither until the last of one goes', () => {
  const names = new PublisherNames()
  expect(names.allCarry('p', 'Old')).toBe(true) // none held
  names.hold(0, { publisherId: 'p', publisherName: 'Old' })
  names.hold(1, { publisherId: 'p', publisherName: 'Old' })
  expect(names.allCarry('p', 'Old')).toBe(true)
  expect(names.allCarry('p', 'New')).toBe(false)
  names.hold(0, { publisherId: 'p', publisherName: 'New' }) // re-read under the new name
  expect(names.allCarry('p', 'Old')).toBe(false)
  expect(names.allCarry('p', 'New')).toBe(false)
  names.hold(1, { publisherId: 'p', publisherName: 'New' })
  expect(names.allCarry('p', 'New')).toBe(true)
  names.hold(1, { publisherId: 'q', publisherName: 'New' }) // moved to another publisher
  names.hold(0, undefined) // removed
  expect(names.allCarry('p', 'Anything')).toBe(true)
  expect(names.allCarry('q', 'New')).toBe(true)
  expect(names.allCarry('q', 'Old')).toBe(false)
})

test('random holds and removals answer as a count of every name of every publisher', () => {
  const random = seededRandom(7)
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
  const names = new PublisherNames()
  const held = new Map<number, { publisherId: string; publisherName: string }>()
  const publishers = ['a', 'b', 'c']
  const titles = ['One', 'Two', 'Three']
  for (let step = 0; step < 5000; step++) {
    const slot = Math.floor(random() * 12)
    const doc = random() < 0.2 ? undefined : { publisherId: pick(publishers), publisherName: pick(titles) }
    names.hold(slot, doc)
    if (doc) held.set(slot, doc)
    else held.delete(slot)
    for (const publisherId of publishers) {
      const carried = new Set([...held.values()].filter((d) => d.publisherId === publisherId).map((d) => d.publisherName))
      for (const name of titles)
        expect(names.allCarry(publisherId, name)).toBe(carried.size === 0 || (carried.size === 1 && carried.has(name)))
    }
  }
})
