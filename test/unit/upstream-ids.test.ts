/** Ids an upstream may send: whatever feed, page or bundle they come in, a dot segment is a problem with its item. */
import { describe, expect, test } from 'bun:test'
import { feedPageItems } from '../../src/upstream/feed-client'

const publisher = (id: string) => ({ id, name: id })

describe('dot segments from a feed', () => {
  test('"." and ".." as a publisher, node or version id are reported, one by one; the other entries stay', () => {
    const changes = [
      { serial: 1, kind: 'publisher', op: 'upsert', id: '..', entity: publisher('..') },
      { serial: 2, kind: 'node', op: 'upsert', id: '.', entity: { id: '.', publisher: publisher('p') } },
      {
        serial: 3,
        kind: 'version',
        op: 'upsert',
        id: '00000000-0000-4000-8000-000000000001',
        entity: { id: '00000000-0000-4000-8000-000000000001', version: '..', node_id: 'fine' },
      },
      { serial: 4, kind: 'node', op: 'upsert', id: 'fine', entity: { id: 'fine', publisher: publisher('p') } },
    ]
    const page = feedPageItems({ instance: 'up', changes, next: 4, head: 4 } as never, 0)
    expect(page.problems.map((p) => [p.id, p.reason])).toEqual([
      ['..', 'malformed publisher: id: is not a usable id'],
      ['.', 'malformed node: id: is not a usable id'],
      ['00000000-0000-4000-8000-000000000001', 'malformed version: version: is a dot segment'],
    ])
    expect(page.items.map((i) => ('data' in i.item ? i.item.data.id : ''))).toEqual(['fine'])
  })
})
