import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { fixtureJsonSchema } from '../../src/domain/fixture'
import { stableUuid, UUID_PATTERN } from '../../src/domain/ids'
import { parseFixture, problemPath } from '../../src/services/fixture-parse'

const read = (path: string) => readFileSync(new URL(path, import.meta.url), 'utf8')

describe('the fixture schema', () => {
  test('docs/fixture.schema.json is the JSON Schema generated from the valibot schema (regenerate: registry-mirror fixture --schema)', () => {
    expect(JSON.parse(read('../../docs/fixture.schema.json'))).toEqual(fixtureJsonSchema())
  })

  test('the example fixture is valid, and names the committed JSON Schema for editors', () => {
    const text = read('../fixtures/example-fixture.json')
    expect(parseFixture(text).problems).toEqual([])
    expect(JSON.parse(text).$schema).toBe('../../docs/fixture.schema.json')
  })

  test('a NUL character in any text is a problem at its place (PostgreSQL cannot store it)', () => {
    expect(parseFixture('{"users": [{"id": "alice", "name": "a\\u0000b"}]}').problems).toEqual([
      { path: 'users.0.name', message: 'text may not hold a NUL character (\\u0000)' },
    ])
  })

  test('an empty object is a valid (empty) fixture; other JSON values are not', () => {
    expect(parseFixture('{}').problems).toEqual([])
    for (const text of ['[]', 'null', '"x"', '3'])
      expect(parseFixture(text).problems).toEqual([{ path: '', message: 'must be a JSON object' }])
  })

  test('problem paths read as in the file', () => {
    expect(problemPath(['nodes', 3, 'versions', 0, 'version'])).toBe('nodes[3].versions[0].version')
    expect(problemPath([{ key: 'time' }])).toBe('time')
    expect(problemPath([])).toBe('')
  })

  test('problems never show a token', () => {
    const secret = 'secret-token-value-0000000001'
    const text = JSON.stringify({
      users: [{ id: 'a', tokens: [secret, secret, 7] }],
      publishers: [{ id: 'p', tokens: [{ token: secret + ' x' }] }],
    })
    const { problems } = parseFixture(text)
    expect(problems.length).toBeGreaterThan(0)
    expect(JSON.stringify(problems)).not.toContain('secret-token')
  })
})

describe('stableUuid', () => {
  test('the same name gives the same id, in the UUID v4 shape version ids are checked against', () => {
    const id = stableUuid('version:blur-pack@1.0.0')
    expect(id).toBe(stableUuid('version:blur-pack@1.0.0'))
    expect(id).not.toBe(stableUuid('version:blur-pack@1.0.1'))
    expect(id).toMatch(UUID_PATTERN)
  })
})
