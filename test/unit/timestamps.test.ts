import { describe, expect, test } from 'bun:test'
import { normalizeTime } from '../../src/domain/timestamps'

const NOW = '2030-01-01T00:00:00.000Z'

describe('normalizeTime', () => {
  test.each([
    ['2025-02-09T12:51:54.479852Z', '2025-02-09T12:51:54.479Z'],
    ['2026-11-23T14:30:00+08:00', '2026-11-23T06:30:00.000Z'],
    ['2026-11-23T14:30:00-0130', '2026-11-23T16:00:00.000Z'],
    ['2026-11-23t06:30:00z', '2026-11-23T06:30:00.000Z'],
    ['2026-11-23 06:30:00', '2026-11-23T06:30:00.000Z'],
    ['2026-11-23T06:30', '2026-11-23T06:30:00.000Z'],
    ['2026-11-23', '2026-11-23T00:00:00.000Z'],
    ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
  ])('%s -> %s', (value, expected) => {
    expect(normalizeTime(value, NOW)).toBe(expected)
  })

  test('a time without a zone is UTC wherever the server runs', () => {
    // JavaScript alone reads it in the local zone: run in one far from UTC (Bun applies TZ at once).
    const saved = process.env.TZ
    process.env.TZ = 'Asia/Shanghai'
    try {
      expect(normalizeTime('2026-11-23T14:30:00', NOW)).toBe('2026-11-23T14:30:00.000Z')
      expect(normalizeTime('2026-11-23 14:30', NOW)).toBe('2026-11-23T14:30:00.000Z')
    } finally {
      if (saved === undefined) delete process.env.TZ
      else process.env.TZ = saved
    }
  })

  test.each([
    undefined,
    null,
    '',
    'yesterday',
    '1',
    'Nov 23 2026',
    '2026-13-45T99:00:00Z',
    '+010000-01-01T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2025-02-29',
    '2026-04-31',
    '2026-11-23T24:00:00Z',
    '2026-11-23T12:60Z',
    '2026-11-23T12:00:60Z',
    1795415400,
    {},
  ])('%p is not a time: the fallback', (value) => {
    expect(normalizeTime(value, NOW)).toBe(NOW)
  })
})
