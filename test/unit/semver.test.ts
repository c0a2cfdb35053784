import { describe, expect, test } from 'bun:test'
import { compareVersions, normalizeSemver } from '../../src/domain/semver'

describe('normalizeSemver', () => {
  test.each([
    ['1.2.3', '1.2.3'],
    ['v1.2', '1.2.0'],
    ['V1', null],
    ['1', '1.0.0'],
    ['v2.0.0-rc.1+build.5', '2.0.0-rc.1+build.5'],
    ['1.01.0', '1.1.0'],
    [' 1.2.3 ', '1.2.3'],
  ])('%p -> %p', (input, expected) => {
    expect(normalizeSemver(input) ?? null).toBe(expected)
  })

  test.each(['', 'latest', '1.2.3.4', '1..2', 'v', '1.2.3-', '1.2.3+', '-1.0.0'])('rejects %p', (input) => {
    expect(normalizeSemver(input)).toBeUndefined()
  })
})

describe('compareVersions', () => {
  test('orders by precedence, numerically, releases above prereleases', () => {
    const sorted = ['1.10.0', '1.2.0', '1.2.0-alpha', '1.2.0-alpha.10', '1.2.0-alpha.2', '1.2.0-beta', '0.9.9', '2.0.0'].sort(
      compareVersions,
    )
    expect(sorted).toEqual(['0.9.9', '1.2.0-alpha', '1.2.0-alpha.2', '1.2.0-alpha.10', '1.2.0-beta', '1.2.0', '1.10.0', '2.0.0'])
  })

  test('build metadata does not change precedence', () => {
    expect(compareVersions('1.0.0+a', '1.0.0+b')).toBe(0)
  })
})
