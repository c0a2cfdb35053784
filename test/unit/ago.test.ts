/** How the pages tell the age of a sync in words: the largest whole unit, "just now" under a minute or ahead of the clock. */
import { expect, test } from 'bun:test'
import { ago } from '../../src/web/origin'

test('ages in words', () => {
  const now = new Date('2026-03-01T12:00:00.000Z')
  const before = (ms: number) => new Date(now.getTime() - ms).toISOString()
  const MIN = 60_000
  expect(
    [
      0,
      59_999,
      MIN,
      59 * MIN + 59_999,
      60 * MIN,
      23 * 60 * MIN,
      24 * 60 * MIN,
      13 * 24 * 60 * MIN,
      45 * 24 * 60 * MIN,
      400 * 24 * 60 * MIN,
    ].map((ms) => ago(before(ms), now)),
  ).toEqual([
    'just now',
    'just now',
    '1 minute ago',
    '59 minutes ago',
    '1 hour ago',
    '23 hours ago',
    '1 day ago',
    '1 week ago',
    '1 month ago',
    '1 year ago',
  ])
  // A time ahead of the clock (it was set back since), or one that does not parse.
  expect(ago(before(-5 * MIN), now)).toBe('just now')
  expect(ago('not a time', now)).toBe('just now')
})
