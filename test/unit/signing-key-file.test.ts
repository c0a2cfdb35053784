import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileSecret } from '../../src/signing-key-file'
import { tempDirs } from '../support/tmp'

const dirs = tempDirs('signing-key')
afterEach(dirs.cleanup)

test('the first start makes the key (0600) and every later one reads it; nothing is left aside', () => {
  const dir = dirs.make()
  const key = fileSecret(dir)
  expect(key).toMatch(/^[0-9a-f]{64}$/)
  expect(statSync(join(dir, 'signing.key')).mode & 0o777).toBe(0o600)
  expect(fileSecret(dir)).toBe(key)
  expect(readdirSync(dir)).toEqual(['signing.key'])
})

test('an empty key file, what a first start killed between creating and writing it left, is replaced', () => {
  const dir = dirs.make()
  writeFileSync(join(dir, 'signing.key'), '', { mode: 0o600 })
  const key = fileSecret(dir)
  expect(key).toMatch(/^[0-9a-f]{64}$/) // never '', with which anyone could sign an upload URL
  expect(readFileSync(join(dir, 'signing.key'), 'utf8').trim()).toBe(key)
  expect(fileSecret(dir)).toBe(key)
  expect(readdirSync(dir)).toEqual(['signing.key'])
})

test('a key already there is kept as it is', () => {
  const dir = dirs.make()
  writeFileSync(join(dir, 'signing.key'), 'the-old-key\n')
  expect(fileSecret(dir)).toBe('the-old-key')
})
