import { describe, expect, test } from 'bun:test'
import { hashToken, maskToken, newSecretToken, nodeIdProblem, PUBLISHER_ID_PATTERN } from '../../src/domain/ids'

describe('nodeIdProblem', () => {
  test.each(['a', 'comfyui-impact-pack', 'ComfyUI_Foo.bar', '1abc', 'a..b', 'x'.repeat(100)])('accepts %p', (id) => {
    expect(nodeIdProblem(id)).toBeUndefined()
  })
  test.each(['', '-a', 'a-', '.a', 'a_', 'has space', 'ünïcode', 'a/b', 'x'.repeat(101)])('rejects %p', (id) => {
    expect(nodeIdProblem(id)).toBeString()
  })
})

describe('publisher ids', () => {
  test('lowercase letter first, then lowercase letters, digits and hyphens', () => {
    expect(['acme', 'a1-b2', 'z'].every((id) => PUBLISHER_ID_PATTERN.test(id))).toBe(true)
    expect(['Acme', '1acme', '-a', 'a_b', ''].some((id) => PUBLISHER_ID_PATTERN.test(id))).toBe(false)
  })
})

describe('tokens', () => {
  test('are random, 256 bits, hashed one-way and masked to 4 characters', () => {
    const a = newSecretToken()
    expect(a).toHaveLength(43)
    expect(newSecretToken()).not.toBe(a)
    expect(hashToken(a)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashToken(a)).not.toContain(a)
    expect(maskToken(a)).toBe(`${a.slice(0, 4)}***`)
  })
})
