import { describe, expect, test } from 'bun:test'
import { normalizePlatformValue, platformKeys, repositoryKey } from '../../src/domain/platform'

describe('platform values', () => {
  test('normalise case and spacing around ::', () => {
    expect(normalizePlatformValue('  POSIX::Linux ')).toBe('posix :: linux')
    expect(normalizePlatformValue('GPU  ::  NVIDIA   CUDA')).toBe('gpu :: nvidia cuda')
  })
  test('keys are delimited and empty when nothing is declared', () => {
    expect(platformKeys(['OS Independent', 'os independent'])).toBe('|os independent|')
    expect(platformKeys([])).toBe('')
    expect(platformKeys(['', '  '])).toBe('')
  })
})

describe('repositoryKey', () => {
  test.each([
    ['https://github.com/Foo/bar.git', 'github.com/foo/bar'],
    ['http://www.github.com/foo/bar/', 'github.com/foo/bar'],
    ['git@github.com:foo/bar.git', 'github.com/foo/bar'],
    ['github.com/foo/bar', 'github.com/foo/bar'],
    ['', ''],
  ])('%p -> %p', (url, key) => expect(repositoryKey(url)).toBe(key))
})
