import { afterEach, describe, expect, test } from 'bun:test'
import { silentLog } from '../../src/log'
import { createIndexedSearch } from '../../src/search/indexed-search'
import { applyChanges } from '../../src/services/changes'
import { addUser, aliceWithPublisher, makeTestApp, publish, publishActive, type TestApp } from '../support/app'
import { realNodes, seedNodes, type SeedNode } from '../support/seed'

let t: TestApp
afterEach(() => t.cleanup())

/** A fresh app whose store holds `nodes` before the index warms. */
async function appWith(nodes: SeedNode[], engine: 'index' | 'store' = 'index') {
  t = await makeTestApp({ engine })
  await seedNodes(t.deps.db, nodes)
  await applyChanges(t.deps, { nodes: nodes.map((n) => n.id), publishers: [] })
  return t
}

const ids = (body: { nodes: { id: string }[] }) => body.nodes.map((n) => n.id)
const search = async (query: string) => (await t.call('GET', `/nodes/search?${query}`)).body
const list = async (query: string) => (await t.call('GET', `/nodes?${query}`)).body

const KEYWORD_NODES: SeedNode[] = [
  {
    id: 'comfyui-controlnet-aux',
    name: 'ControlNet Auxiliary Preprocessors',
    description: 'Preprocessors for ControlNet',
    downloads: 5000,
  },
  {
    id: 'upscaler-pack',
    description: 'Upscale images with models',
    author: 'Jane Doe',
    tags: ['image', 'upscaling'],
    publisher: 'studio',
    publisherName: 'Studio Seventeen',
  },
  { id: 'video-suite', name: 'Video Helper Suite', description: 'Load and combine videos', downloads: 9000 },
  { id: 'video', description: 'a tiny pack' },
  { id: 'plain', description: 'nothing to see' },
]

describe('keyword search', () => {
  test.each([
    ['a word prefix', 'contr', 'comfyui-controlnet-aux'],
    ['one typo in a longer word', 'contrlnet', 'comfyui-controlnet-aux'],
    ['another case', 'CONTROLNET', 'comfyui-controlnet-aux'],
    ['the description', 'preprocessors', 'comfyui-controlnet-aux'],
    ['the author', 'jane', 'upscaler-pack'],
    ['the tags', 'upscaling', 'upscaler-pack'],
    ['the publisher id', 'studio', 'upscaler-pack'],
    ['the publisher name', 'seventeen', 'upscaler-pack'],
    ['a prefix of a name', 'upsc', 'upscaler-pack'],
  ])('matches %s', async (_, q, expected) => {
    await appWith(KEYWORD_NODES)
    expect(ids(await search(`search=${q}`))[0]).toBe(expected)
  })

  test('a word longer than 40 characters is found by itself and by its start; one found nowhere matches nothing', async () => {
    const long = 'ImpactWildcardEncodeWithTokenizerSettingsAndMore' // 48 characters
    await appWith([...KEYWORD_NODES, { id: 'impact-pack', description: `Provides ${long} and more` }])
    for (const q of [long, long.slice(0, 42), `${long}Extra`]) expect(ids(await search(`search=${q}`))).toEqual(['impact-pack'])
    expect((await search(`search=${'L'.repeat(50)}`)).total).toBe(0)
  })

  // While the index warms, the store answers: by substring, over the same fields.
  test.each([
    ['the id', 'controlnet-aux', 'comfyui-controlnet-aux'],
    ['the name', 'auxiliary', 'comfyui-controlnet-aux'],
    ['the description', 'preprocessors', 'comfyui-controlnet-aux'],
    ['the author', 'jane', 'upscaler-pack'],
    ['the tags', 'upscaling', 'upscaler-pack'],
    ['the publisher id', 'studio', 'upscaler-pack'],
    ['the publisher name', 'seventeen', 'upscaler-pack'],
  ])('the store matches %s', async (_, q, expected) => {
    await appWith(KEYWORD_NODES, 'store')
    expect(ids(await search(`search=${q}`))).toEqual([expected])
  })

  test("the store takes a keyword's % and _ as plain characters", async () => {
    await appWith(
      [
        { id: 'percent', description: 'renders 50% faster' },
        { id: 'digits', description: 'renders 500 faster' },
        { id: 'snake_case' },
        { id: 'snakeXcase' },
      ],
      'store',
    )
    expect(ids(await search('search=50%25'))).toEqual(['percent'])
    expect(ids(await search('search=e_c'))).toEqual(['snake_case'])
  })

  test('short words are not matched with a typo', async () => {
    await appWith(KEYWORD_NODES)
    expect((await search('search=vido')).total).toBe(0)
    expect(ids(await search('search=vide'))).toContain('video-suite')
  })

  test('all words must match', async () => {
    await appWith(KEYWORD_NODES)
    expect(ids(await search('search=video%20helper'))).toEqual(['video-suite'])
    expect((await search('search=video%20upscale')).total).toBe(0)
  })

  test('an exact id ranks first, ignoring case, even against more relevant and popular packs', async () => {
    await appWith(KEYWORD_NODES)
    expect(ids(await search('search=VIDEO')).slice(0, 2)).toEqual(['video', 'video-suite'])
  })

  test('equal relevance falls back to search_ranking, then downloads, then id', async () => {
    const tie = (id: string, ranking: number, downloads: number): SeedNode => ({ id, description: 'sprocket widget', ranking, downloads })
    await appWith([tie('tie-d', 0, 0), tie('tie-a', 0, 0), tie('tie-b', 5, 1), tie('tie-c', 5, 2)])
    expect(ids(await search('search=sprocket'))).toEqual(['tie-c', 'tie-b', 'tie-a', 'tie-d'])
  })

  test('without a keyword: search_ranking desc, downloads desc, id asc', async () => {
    await appWith([
      { id: 'b', ranking: 1, downloads: 5 },
      { id: 'a', ranking: 1, downloads: 5 },
      { id: 'c', ranking: 1, downloads: 9 },
      { id: 'd', ranking: 3, downloads: 0 },
      { id: 'e', ranking: 0, downloads: 100 },
    ])
    expect(ids(await search(''))).toEqual(['d', 'c', 'a', 'b', 'e'])
    expect(ids(await list('limit=2&page=2'))).toEqual(['a', 'b'])
  })
})

describe('filters', () => {
  test('repository_url_search matches the normalised URL', async () => {
    await appWith([
      { id: 'bar', repository: 'https://github.com/Foo/bar.git' },
      { id: 'baz', repository: 'https://www.github.com/foo/baz/' },
      { id: 'none' },
    ])
    expect(ids(await search('repository_url_search=github.com/foo/bar'))).toEqual(['bar'])
    expect(ids(await search('repository_url_search=https://github.com/FOO/bar/'))).toEqual(['bar'])
    expect(ids(await search('repository_url_search=foo/ba'))).toEqual(['bar', 'baz'])
  })

  test.each(['index', 'store'] as const)(
    'host_node_search: equal or containing, any case, latest active version only (%s)',
    async (engine) => {
      await appWith(
        [
          { id: 'blur', hostNodes: ['ImageBlur', 'ImageSharpen'] },
          { id: 'fancy-blur', hostNodes: ['FancyBlurPlus'], downloads: 10 },
          { id: 'pending', hostNodes: ['ImageBlurPending'], versionStatus: 'pending' },
        ],
        engine,
      )
      expect(ids(await search('host_node_search=ImageBlur'))).toEqual(['blur'])
      expect(ids(await search('host_node_search=blur'))).toEqual(['fancy-blur', 'blur'])
      expect(ids(await search('comfy_node_search=imagesharpen'))).toEqual(['blur'])
      expect((await search('host_node_search=pending')).total).toBe(0)
    },
  )

  test('GET /host-nodes/{name}/node and /comfy-nodes/{name}/node', async () => {
    await appWith([
      { id: 'blur', hostNodes: ['ImageBlur'] },
      { id: 'popular-blur', hostNodes: ['ImageBlur'], downloads: 50 },
    ])
    expect((await t.call('GET', '/host-nodes/ImageBlur/node')).body.id).toBe('popular-blur')
    expect((await t.call('GET', '/comfy-nodes/imageblur/node')).body.id).toBe('popular-blur')
    expect((await t.call('GET', '/host-nodes/Nope/node')).status).toBe(404)
  })

  const PLATFORM_NODES: SeedNode[] = [
    { id: 'linux', os: ['POSIX :: Linux'], accelerators: ['GPU :: NVIDIA CUDA'] },
    { id: 'windows', os: ['Microsoft :: Windows'], accelerators: ['GPU :: AMD ROCm'] },
    { id: 'independent', os: ['OS Independent'], accelerators: ['NPU :: Huawei Ascend'] },
    { id: 'undeclared' },
    { id: 'mac', os: ['MacOS'], accelerators: ['GPU :: Apple Metal'] },
  ]

  test.each([
    ['POSIX', ['independent', 'linux', 'undeclared']],
    ['posix::LINUX', ['independent', 'linux', 'undeclared']],
    ['POSIX :: Linux :: Ubuntu', ['independent', 'undeclared']],
    ['Microsoft :: Windows', ['independent', 'undeclared', 'windows']],
    ['OS Independent', ['independent', 'undeclared']],
  ])('supported_os=%p is hierarchical, with OS Independent and undeclared matching', async (os, expected) => {
    await appWith(PLATFORM_NODES)
    expect(ids(await search(`supported_os=${encodeURIComponent(os)}`)).sort()).toEqual(expected)
  })

  test.each([
    ['GPU', ['linux', 'mac', 'undeclared', 'windows']],
    ['gpu :: nvidia cuda', ['linux', 'undeclared']],
    ['NPU', ['independent', 'undeclared']],
  ])('supported_accelerator=%p', async (acc, expected) => {
    await appWith(PLATFORM_NODES)
    expect(ids(await search(`supported_accelerator=${encodeURIComponent(acc)}`)).sort()).toEqual(expected)
  })

  test('banned nodes only with include_banned=true; deleted nodes never', async () => {
    await appWith([{ id: 'ok' }, { id: 'banned', status: 'banned' }, { id: 'deleted', status: 'deleted' }])
    expect(ids(await search(''))).toEqual(['ok'])
    expect(ids(await search('include_banned=false'))).toEqual(['ok'])
    expect(ids(await search('include_banned=true')).sort()).toEqual(['banned', 'ok'])
    expect(ids(await list('include_banned=true&node_id=deleted'))).toEqual([])
  })

  test('every filter combines with the others and with paging', async () => {
    const many: SeedNode[] = Array.from({ length: 30 }, (_, i) => ({
      id: `pack-${String(i).padStart(2, '0')}`,
      description: i % 2 ? 'video tools' : 'image tools',
      os: i % 3 ? ['POSIX :: Linux'] : ['Microsoft :: Windows'],
      accelerators: i % 5 ? ['GPU :: NVIDIA CUDA'] : [],
      repository: `https://github.com/org${i % 4}/pack-${i}`,
      hostNodes: [`Node${i}`],
      downloads: i,
      status: i === 29 ? 'banned' : 'active',
    }))
    await appWith(many)
    const expected = many
      .map((n, i) => ({ n, i }))
      .filter(({ i }) => i % 2 === 1 && i % 3 !== 0 && i % 4 === 1 && i !== 29)
      .sort((a, b) => b.n.downloads! - a.n.downloads!)
      .map(({ n }) => n.id)
    const q = 'search=video&supported_os=POSIX&supported_accelerator=GPU&repository_url_search=github.com/org1/&host_node_search=node'
    const first = await search(`${q}&limit=2`)
    expect(first).toMatchObject({ total: expected.length, totalPages: Math.ceil(expected.length / 2), limit: 2, page: 1 })
    const second = await search(`${q}&limit=2&page=2`)
    expect([...ids(first), ...ids(second)]).toEqual(expected.slice(0, 4))
    expect(await search(`${q}&limit=2&page=50`)).toMatchObject({ nodes: [], total: expected.length })
    expect((await search(`${q}&limit=1000`)).limit).toBe(100)
  })

  test('GET /nodes takes node_id and timestamp together with the search filters', async () => {
    await appWith([
      { id: 'old-linux', os: ['POSIX :: Linux'], updatedAt: '2026-01-01T00:00:00.000Z' },
      { id: 'new-linux', os: ['POSIX :: Linux'], updatedAt: '2026-02-01T00:00:00.000Z' },
      { id: 'new-windows', os: ['Microsoft :: Windows'], updatedAt: '2026-02-01T00:00:00.000Z' },
    ])
    expect(ids(await list('timestamp=2026-01-15T00:00:00Z&supported_os=POSIX'))).toEqual(['new-linux'])
    expect(ids(await list('node_id=old-linux&node_id=NEW-WINDOWS')).sort()).toEqual(['new-windows', 'old-linux'])
    expect(ids(await list('node_id=old-linux&node_id=new-linux&timestamp=2026-01-15T00:00:00Z'))).toEqual(['new-linux'])
  })
})

/** A small deterministic PRNG, so a failing case can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    return seed / 0x7fffffff
  }
}

describe('paging (property)', () => {
  const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'video', 'image']
  const random = prng(42)
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!
  // Host node filters matching a few nodes (their slots sorted into list order) or many (found walking it).
  const nodes: SeedNode[] = Array.from({ length: 100 }, (_, i) => ({
    id: `n${i}`,
    description: `${pick(WORDS)} ${pick(WORDS)}`,
    ranking: Math.floor(random() * 3),
    downloads: Math.floor(random() * 4),
    os: pick([[], ['POSIX :: Linux'], ['Microsoft :: Windows'], ['OS Independent']]),
    accelerators: pick([[], ['GPU :: NVIDIA CUDA'], ['GPU :: AMD ROCm']]),
    status: random() < 0.1 ? 'banned' : 'active',
    hostNodes: random() < 0.5 ? [`Host${i % 29}`] : [],
  }))
  const queries = Array.from({ length: 40 }, () =>
    [
      random() < 0.5 ? `search=${pick(WORDS)}` : '',
      random() < 0.3 ? `supported_os=${pick(['POSIX', 'Microsoft', 'MacOS'])}` : '',
      random() < 0.3 ? `supported_accelerator=${pick(['GPU', 'GPU :: AMD ROCm'])}` : '',
      random() < 0.2 ? `host_node_search=host${Math.floor(random() * 29)}` : random() < 0.15 ? 'host_node_search=host' : '',
      random() < 0.3 ? 'include_banned=true' : '',
    ]
      .filter(Boolean)
      .join('&'),
  )

  test('paging through any query visits every match exactly once', async () => {
    await appWith(nodes)
    for (const q of queries) {
      const whole = await search(`${q}&limit=100`)
      const limit = 1 + Math.floor(random() * 9)
      const seen: string[] = []
      for (let page = 1; page <= Math.ceil(whole.total / limit) + 1; page++) {
        const body = await search(`${q}&limit=${limit}&page=${page}`)
        expect(body.total).toBe(whole.total)
        seen.push(...ids(body))
      }
      expect(seen).toEqual(ids(whole))
      expect(new Set(seen).size).toBe(seen.length)
    }
  })

  test('without a keyword, the index and the store give the same pages', async () => {
    const filterOnly = queries.map((q) => q.replace(/search=\w+&?/, ''))
    await appWith(nodes, 'store')
    const fromStore = await Promise.all(filterOnly.map((q) => search(`${q}&limit=100`)))
    await t.cleanup()
    await appWith(nodes)
    const fromIndex = await Promise.all(filterOnly.map((q) => search(`${q}&limit=100`)))
    expect(fromIndex.map(ids)).toEqual(fromStore.map(ids))
  })
})

describe('the index follows every write at once', () => {
  // The store (what answers while the index warms) reads the search texts each write leaves.
  test.each(['index', 'store'] as const)(
    'publish, upload, install, review, version edits and publisher renames show up in the next request (%s)',
    async (engine) => {
      t = await makeTestApp({ engine })
      const { token, pat } = await aliceWithPublisher(t)
      await publish(t, { pat, node: 'alpha-pack', version: '1.0.0', nodeFields: { description: 'sprocket maker' } })
      expect(ids(await search('search=sprocket'))).toEqual(['alpha-pack'])
      expect((await search('host_node_search=ImageBlur')).total).toBe(0)

      await publishActive(t, { pat, node: 'beta-pack', version: '1.0.0', nodeFields: { description: 'sprocket polisher' } })
      expect(ids(await search('host_node_search=ImageBlur'))).toEqual(['beta-pack'])
      expect(ids(await search('search=sprocket'))).toEqual(['alpha-pack', 'beta-pack'])

      await t.call('GET', '/nodes/beta-pack/install')
      await t.deps.downloads.flush() // counted in memory, written at most a second later
      expect(ids(await list(''))).toEqual(['beta-pack', 'alpha-pack'])
      expect((await list('')).nodes[0].downloads).toBe(1)

      t.clock.now = new Date('2026-06-01T00:00:00.000Z')
      await t.call('POST', '/nodes/alpha-pack/reviews?star=4', { token: await addUser(t, 'bob') })
      expect(ids(await list('timestamp=2026-05-01T00:00:00Z'))).toEqual(['alpha-pack'])
      expect((await list('node_id=alpha-pack')).nodes[0].rating).toBe(4)

      const version = (await list('node_id=beta-pack')).nodes[0].latest_version
      await t.call('PUT', `/publishers/acme/nodes/beta-pack/versions/${version.id}`, { token, body: { deprecated: true } })
      expect((await list('node_id=beta-pack')).nodes[0].latest_version.deprecated).toBe(true)

      await t.call('PUT', '/publishers/acme', { token, body: { name: 'Gizmo Works' } })
      expect(ids(await search('search=gizmo'))).toEqual(['beta-pack', 'alpha-pack'])
      expect((await search('search=gizmo')).nodes[0].publisher.name).toBe('Gizmo Works')

      const { search: status } = (await t.call('GET', '/ready')).body
      if (engine === 'index') expect(status).toMatchObject({ ready: true, engine: 'index', state: 'ready', indexed: 2, stored: 2 })
      else expect(status).toMatchObject({ ready: false, engine: 'store' })
    },
  )

  test('a list read while a write is being indexed is not kept as the current answer', async () => {
    t = await makeTestApp()
    const { pat } = await aliceWithPublisher(t)
    await publish(t, { pat, node: 'first', version: '1.0.0' })
    const indexChange = t.deps.search.nodesChanged
    let during: { total: number } | undefined
    t.deps.search.nodesChanged = async (changed) => {
      during = await list('') // a reader racing the index update
      await indexChange(changed)
    }
    await publish(t, { pat, node: 'second', version: '1.0.0' })
    expect(during?.total).toBe(1)
    expect((await list('')).total).toBe(2)
  })

  test('a ban or deletion written to the store leaves search once announced', async () => {
    await appWith([
      { id: 'a', description: 'sprocket' },
      { id: 'b', description: 'sprocket' },
    ])
    await t.deps.db.updateTable('nodes').set({ status: 'banned' }).where('id', '=', 'a').execute()
    await t.deps.db.updateTable('nodes').set({ status: 'deleted' }).where('id', '=', 'b').execute()
    await applyChanges(t.deps, { nodes: ['a', 'b'], publishers: [] })
    expect((await search('search=sprocket')).total).toBe(0)
    expect(ids(await search('search=sprocket&include_banned=true'))).toEqual(['a'])
    expect((await t.call('GET', '/ready')).body.search).toMatchObject({ indexed: 1, stored: 1 })
  })
})

describe('warming', () => {
  test('the store answers until the index is warm, then the index takes over', async () => {
    t = await makeTestApp({ engine: 'store' })
    await seedNodes(t.deps.db, [
      { id: 'x', os: ['POSIX :: Linux'] },
      { id: 'y', downloads: 3 },
    ])
    const cold = createIndexedSearch(t.deps.db, silentLog)
    t.deps.search = cold
    expect((await t.call('GET', '/ready')).body).toMatchObject({
      status: 'ready',
      search: { ready: false, engine: 'store', state: 'warming', stored: 2 },
    })
    expect(ids(await search('supported_os=POSIX'))).toEqual(['y', 'x'])
    await cold.warm()
    expect((await t.call('GET', '/ready')).body.search).toMatchObject({ ready: true, engine: 'index', indexed: 2 })
    expect(ids(await search('supported_os=POSIX'))).toEqual(['y', 'x'])
  })
})

describe('search quality on real node packs', () => {
  test.each([
    ['search=controlnet', 'comfyui_controlnet_aux'],
    ['search=upscale', 'ComfyUI_UltimateSDUpscale'],
    ['search=VHS_VideoCombine', 'ComfyUI-VideoHelperSuite'],
    ['host_node_search=VHS_VideoCombine', 'ComfyUI-VideoHelperSuite'],
    ['search=impact', 'ComfyUI-Impact-Pack'],
    ['search=animatediff%20evolved', 'ComfyUI-AnimateDiff-Evolved'],
    ['search=contrlnet', 'comfyui_controlnet_aux'],
  ])('%s finds %s first', async (query, expected) => {
    await appWith(realNodes())
    expect(ids(await search(query))[0]).toBe(expected)
  })

  test('search=video puts the video packs people use in the first page', async () => {
    await appWith(realNodes())
    const top = ids(await search('search=video&limit=10'))
    for (const id of ['ComfyUI-VideoHelperSuite', 'ComfyUI-HunyuanVideoWrapper', 'ComfyUI-LTXVideo']) expect(top).toContain(id)
  })
})
