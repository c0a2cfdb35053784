/**
 * The web pages in a real browser: Debian's Chromium, driven by playwright-core, against the compiled executable.
 * Search as you type, filters, a node page, a node mirrored from the upstream the server follows, copying the
 * install command, downloading, a narrow screen, hostile text, and the whole walk again behind a reverse proxy that
 * serves the registry under a path prefix. Writes a screenshot of each page: to registry-mirror-screenshots/ in the
 * temporary directory (named in the output), or to the README's docs/screenshots/ with `npm run screenshots`, so that
 * a test run leaves the tree as it was.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { makeZip } from '../support/archives'
import { cli, ensureBinary, startServer, type Server } from '../support/binary'

const CHROMIUM = '/usr/bin/chromium'
/** One place each run overwrites: a new directory per run piled up in the temporary directory. */
const SCREENSHOTS = process.env.REGISTRY_MIRROR_SCREENSHOTS || join(tmpdir(), 'registry-mirror-screenshots')
const data = mkdtempSync(join(tmpdir(), 'registry-mirror-web-'))
/**
 * What the server is told its address is: comfy-cli's own (so the screenshots show the plain install command and
 * stay the same from run to run). The browser reaches it at another address, which the pages must not mind.
 */
const PUBLIC_URL = 'http://localhost:8080'

/** A pack whose __init__.py maps these host node classes. */
const pack = (classes: string[]) =>
  makeZip([{ name: '__init__.py', data: `NODE_CLASS_MAPPINGS = {${classes.map((c) => `"${c}": object`).join(', ')}}\n` }])

const HOSTILE_NAME = '<img src=x onerror="window.pwned=1">Hostile'
const HOSTILE_DESCRIPTION = '<script>window.pwned=2</script> Shows as text & "quoted".'

let server: Server
let upstream: Server
let browser: Browser
const archives = new Map<string, Uint8Array<ArrayBuffer>>()
const upstreamData = mkdtempSync(join(tmpdir(), 'registry-mirror-web-upstream-'))

/** A user and their publisher on a server (the user made with the CLI on its data directory), and a way to publish. */
async function publisherOn(
  dir: string,
  url: string,
  publicUrl: string,
  user: string,
  publisher: { id: string; name: string; description: string; website: string },
) {
  const token = cli(dir, 'users', 'create', '--id', user, '--email', `${user}@example.com`, '--name', user).out
  const post = async (path: string, body: unknown, auth = true) => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    })
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
    return (await res.json()) as any
  }
  await post('/publishers', publisher)
  const { token: pat } = await post(`/publishers/${publisher.id}/tokens`, { name: 'ci' })
  return async (id: string, version: string, node: Record<string, unknown>, classes: string[], changelog = '') => {
    const { signedUrl } = await post(
      `/publishers/${publisher.id}/nodes/${id}/versions`,
      { personal_access_token: pat, node: { id, ...node }, node_version: { version, changelog, dependencies: ['numpy>=1.24'] } },
      false,
    )
    const bytes = pack(classes)
    // The server may believe it is elsewhere (PUBLIC_URL); the upload goes to where it really listens.
    const put = await fetch(signedUrl.replace(publicUrl, url), {
      method: 'PUT',
      headers: { 'content-type': 'application/zip' },
      body: bytes,
    })
    if (put.status !== 200) throw new Error(`upload ${id}: ${put.status}`)
    archives.set(`${id}@${version}`, bytes)
  }
}

async function seed(url: string) {
  const publish = await publisherOn(data, url, PUBLIC_URL, 'alice', {
    id: 'acme',
    name: 'Acme Nodes',
    description: 'Image tools for everyone.',
    website: 'https://acme.example',
  })
  const blur = {
    name: 'Blur Pack',
    description: 'Gaussian, box and motion blur for images and masks.\nWorks on batches.',
    repository: 'https://github.com/acme/blur-pack',
    license: '{"text": "MIT"}',
    supported_os: ['OS Independent'],
    tags: ['image', 'filter'],
  }
  await publish('blur-pack', '1.0.0', blur, ['ImageBlur'], 'First release.')
  await publish('blur-pack', '1.1.0', blur, ['ImageBlur', 'MotionBlur'], 'Adds motion blur.\nFaster box blur.')
  await publish(
    'upscale-kit',
    '2.0.0',
    {
      name: 'Upscale Kit',
      description: 'Upscalers that need CUDA on Windows.',
      supported_os: ['Microsoft :: Windows'],
      supported_accelerators: ['GPU :: NVIDIA CUDA'],
    },
    ['UpscaleImage'],
  )
  // A long pre-release: its page's download button must wrap on a narrow screen.
  await publish(
    'linux-tools',
    '0.3.0-beta.20240515.1234567890',
    { name: 'Linux Tools', description: 'Helpers for Linux only.', supported_os: ['POSIX :: Linux'] },
    ['ShellNode'],
  )
  await publish('xss-pack', '1.0.0', { name: HOSTILE_NAME, description: HOSTILE_DESCRIPTION }, ['Harmless'])
  await fetch(`${url}/nodes/blur-pack/install`) // one download
  // Counts are flushed to the store at most a second later: the pages (and screenshots) show it once it is there.
  for (let tries = 0; ((await (await fetch(`${url}/nodes/blur-pack`)).json()) as { downloads: number }).downloads !== 1; tries++) {
    if (tries > 100) throw new Error('the download count was not flushed within 5 s')
    await Bun.sleep(50)
  }
  await fetch(`${url}/nodes/blur-pack/reviews?star=5`, { method: 'POST' })
}

/** The registry the server follows, with one node (for macOS, so that the filters below leave it out). */
async function seedUpstream(url: string) {
  const publish = await publisherOn(upstreamData, url, url, 'bob', {
    id: 'studio',
    name: 'Studio North',
    description: 'Sharpening tools.',
    website: 'https://studio.example',
  })
  await publish(
    'sharpen-pack',
    '1.2.0',
    {
      name: 'Sharpen Pack',
      description: 'Sharpening and unsharp masking, tuned for Apple silicon.',
      repository: 'https://github.com/studio/sharpen-pack',
      license: '{"text": "Apache-2.0"}',
      supported_os: ['MacOS'],
      supported_accelerators: ['GPU :: Apple Metal'],
    },
    ['ImageSharpen', 'UnsharpMask'],
    'Faster on large images.',
  )
}

/**
 * The upstream listens on 127.0.0.1:8081 when that port is free, so that the screenshots (which show its address)
 * stay the same from run to run; on any free port otherwise.
 */
async function startUpstream(): Promise<Server> {
  try {
    return await startServer(upstreamData, '--port', '8081')
  } catch {
    return startServer(upstreamData)
  }
}

/** Waits until the server's first sync from its upstream has completed (it runs when the server starts). */
async function synced(url: string) {
  for (let i = 0; i < 200; i++) {
    const ready = (await (await fetch(`${url}/ready`)).json()) as any
    if (ready.mirror?.state === 'ok') return
    await Bun.sleep(25)
  }
  throw new Error('the first sync did not complete')
}

/**
 * On a developer's machine without Chromium these tests are skipped with a notice, so that `npm test` works on a
 * fresh machine; CI (`CI` set, as .ci/run does) requires the browser and fails without it.
 */
const browserMissing = !existsSync(CHROMIUM)
if (browserMissing && !process.env.CI) {
  console.warn(`skipping the browser tests: Chromium is missing (${CHROMIUM}); install it with "apt-get install -y chromium"`)
}
const runBrowserTests = !browserMissing || Boolean(process.env.CI)

beforeAll(async () => {
  if (!runBrowserTests) return
  if (browserMissing)
    throw new Error(`Chromium is missing (${CHROMIUM}): install it with "apt-get install -y chromium"; .ci/run does so itself`)
  await ensureBinary()
  upstream = await startUpstream()
  await seedUpstream(upstream.url)
  server = await startServer(data, '--public-url', PUBLIC_URL, '--sync-from', upstream.url, '--sync-archives', 'lazy')
  await synced(server.url)
  await seed(server.url)
  // Playwright gives each launch a fresh temporary profile (user-data dir), removed when the browser closes.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  mkdirSync(SCREENSHOTS, { recursive: true })
  console.log(`screenshots of the pages: ${SCREENSHOTS}`)
  // Two servers, a sync, a browser: past a hook's 5 s on a busy machine.
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  await upstream?.stop()
  rmSync(data, { recursive: true, force: true })
  rmSync(upstreamData, { recursive: true, force: true })
})

/** A page that records every request and every failure: nothing may leave the origin, fail, or complain. */
interface Watched {
  page: Page
  context: BrowserContext
  requests: string[]
  problems: string[]
}

async function open(origin: string, opts: { width?: number; height?: number } = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1024, height: opts.height ?? 720 },
    deviceScaleFactor: 1,
    acceptDownloads: true,
  })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin })
  const page = await context.newPage()
  page.setDefaultTimeout(5000)
  const watched: Watched = { page, context, requests: [], problems: [] }
  page.on('request', (req) => watched.requests.push(req.url()))
  page.on('response', (res) => res.status() >= 400 && watched.problems.push(`${res.status()} ${res.url()}`))
  page.on('console', (msg) => msg.type() === 'error' && watched.problems.push(`console: ${msg.text()}`))
  page.on('pageerror', (err) => watched.problems.push(`page error: ${err.message}`))
  page.on('dialog', (dialog) => {
    watched.problems.push(`dialog: ${dialog.message()}`)
    void dialog.dismiss()
  })
  return watched
}

/** Every request stayed on the server (under its path prefix), and nothing failed. */
async function finish(w: Watched, prefix: string) {
  await w.context.close()
  expect(w.requests.filter((url) => !url.startsWith(prefix))).toEqual([])
  expect(w.problems).toEqual([])
}

/** Waits until the live results are those of this query (the script updates the address after the results). */
async function resultsFor(page: Page, query: string) {
  // A function, not a string: the page's CSP forbids eval, which a polled string would need. It runs in the page.
  await page.waitForFunction(
    (search) => {
      const { location, document } = globalThis as any
      return location.search === search && !document.querySelector('#results[aria-busy]')
    },
    query ? `?${query}` : '',
  )
}

const shot = (page: Page, name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })

describe.skipIf(!runBrowserTests)('the web pages in Chromium', () => {
  test('search as you type, filter, and open a node', async () => {
    const w = await open(server.url)
    const { page } = w
    await page.goto(`${server.url}/`)
    expect(await page.title()).toBe('Browse nodes · registry-mirror')
    await page.getByRole('heading', { name: 'All 5 nodes' }).waitFor()
    await shot(page, 'home')

    // Typing updates the results in place: the page is never reloaded, and the address follows the search.
    await page.evaluate('window.sameDocument = true')
    await page.getByLabel('Keyword').pressSequentially('blur')
    await resultsFor(page, 'search=blur')
    await page.getByRole('heading', { name: '1 node found' }).waitFor()
    expect(await page.evaluate('window.sameDocument')).toBe(true)
    expect(await page.getByRole('status').first().textContent()).toBe('1 node found')
    await shot(page, 'search')

    // Filters: OS (hierarchical, "OS Independent" matches all), accelerator, host node class.
    await page.getByLabel('Keyword').fill('')
    await page.getByLabel('Operating system').fill('Microsoft :: Windows')
    await resultsFor(page, 'supported_os=Microsoft+%3A%3A+Windows')
    await page.getByRole('heading', { name: '3 nodes found' }).waitFor()
    const titles = async () => (await page.locator('#results h3').allTextContents()).sort()
    expect(await titles()).toEqual(['Blur Pack', HOSTILE_NAME, 'Upscale Kit'].sort())
    await page.getByLabel('Accelerator').fill('GPU :: NVIDIA CUDA')
    await page.getByLabel('Operating system').fill('POSIX :: Linux')
    await resultsFor(page, 'supported_os=POSIX+%3A%3A+Linux&supported_accelerator=GPU+%3A%3A+NVIDIA+CUDA')
    await page.getByRole('heading', { name: '3 nodes found' }).waitFor()
    expect(await titles()).toEqual(['Blur Pack', HOSTILE_NAME, 'Linux Tools'].sort())
    await page.getByLabel('Accelerator').fill('')
    await page.getByLabel('Operating system').fill('')
    await page.getByLabel('Host node class').fill('MotionBlur')
    await resultsFor(page, 'host_node_search=MotionBlur')
    await page.getByRole('heading', { name: '1 node found' }).waitFor()

    // The address is the search: reloading it renders the same results on the server.
    await page.reload()
    expect(await page.getByLabel('Host node class').inputValue()).toBe('MotionBlur')
    await page.getByRole('link', { name: 'Blur Pack' }).click()
    await page.getByRole('heading', { level: 1, name: 'Blur Pack' }).waitFor()
    expect(page.url()).toBe(`${server.url}/-/nodes/blur-pack`)
    expect(await page.title()).toBe('\u2068Blur Pack\u2069 (blur-pack) · registry-mirror')
    await finish(w, server.url)
  })

  test('paging keeps the search; the search form works without the script', async () => {
    const w = await open(server.url)
    const { page } = w
    await page.route('**/*.js', (route) => route.abort())
    w.problems.length = 0
    await page.goto(`${server.url}/?limit=2`)
    await page.getByRole('heading', { name: 'All 5 nodes' }).waitFor()
    expect(await page.locator('#results h3').count()).toBe(2)
    await page.getByRole('link', { name: 'Next page' }).click()
    await page.getByText('Page 2 of 3').waitFor()
    expect(await page.locator('#results h3').count()).toBe(2)
    // Without the script the form submits as a plain GET, keeping the page size.
    await page.getByLabel('Keyword').fill('upscale')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('heading', { name: '1 node found' }).waitFor()
    expect(new URL(page.url()).searchParams.get('limit')).toBe('2')
    await w.context.close()
  })

  test('the node page: copy the install command, download, versions, host node classes', async () => {
    const w = await open(server.url)
    const { page } = w
    await page.goto(`${server.url}/-/nodes/blur-pack`)
    expect(await page.getByRole('main').getByText('Gaussian, box and motion blur').isVisible()).toBe(true)
    await shot(page, 'node')

    await page.getByRole('button', { name: 'Copy: comfy-cli install command' }).click()
    await page.getByText('Copied.').waitFor()
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('ENVIRONMENT=dev comfy node registry-install blur-pack')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download version 1.1.0' }).click(),
    ])
    expect(new Uint8Array(readFileSync((await download.path())!))).toEqual(archives.get('blur-pack@1.1.0')!)

    const versions = page.getByRole('region', { name: 'Versions' })
    expect(await versions.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['1.1.0', '1.0.0'])
    expect(await versions.getByText('Adds motion blur.').isVisible()).toBe(true)
    const classes = page.getByRole('region', { name: 'Host node classes' })
    expect(await classes.getByRole('link').allTextContents()).toEqual(['ImageBlur', 'MotionBlur'])
    const facts = page.getByRole('complementary', { name: 'About' })
    expect(await facts.getByText('MIT').isVisible()).toBe(true)
    expect(await facts.getByRole('link', { name: 'https://github.com/acme/blur-pack' }).isVisible()).toBe(true)
    expect(await facts.getByText('5.0 of 5').isVisible()).toBe(true)

    await facts.getByRole('link', { name: 'Acme Nodes' }).click()
    await page.getByRole('heading', { level: 1, name: 'Acme Nodes' }).waitFor()
    expect(await page.getByRole('region', { name: 'Nodes' }).getByRole('heading', { level: 3 }).count()).toBe(4)
    await shot(page, 'publisher')

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clients' }).click()
    await page.getByRole('heading', { level: 1, name: 'Use this registry with your clients' }).waitFor()
    expect(await page.locator('#registry-url').textContent()).toBe(PUBLIC_URL)
    await shot(page, 'clients')
    await finish(w, server.url)
  })

  test('a mirrored node says where it came from and how fresh the mirror is; its archive comes from the upstream', async () => {
    const w = await open(server.url)
    const { page } = w
    const ready = (await (await fetch(`${server.url}/ready`)).json()) as any
    const recently = '(just now|\\d+ minutes? ago)'
    await page.goto(`${server.url}/`)
    // The footer of every page tells the registry's own state while it follows an upstream.
    expect(await page.getByRole('contentinfo').locator('.mirror-status').textContent()).toMatch(
      new RegExp(`^Mirror of ${upstream.url}: synced ${recently} Up to date$`),
    )
    const card = page.getByRole('article', { name: 'Sharpen Pack' })
    expect(await card.getByRole('listitem').last().textContent()).toMatch(
      new RegExp(`^Mirrored from ${new URL(upstream.url).host}, synced ${recently}$`),
    )
    // Local nodes say nothing of the kind.
    expect(await page.getByRole('article', { name: 'Blur Pack' }).getByText('Mirrored').count()).toBe(0)

    await card.getByRole('link', { name: 'Sharpen Pack' }).click()
    await page.getByRole('heading', { level: 1, name: 'Sharpen Pack' }).waitFor()
    const origin = page.getByRole('region', { name: 'Mirrored node' })
    expect(await origin.getByRole('link', { name: upstream.url }).getAttribute('href')).toBe(upstream.url)
    expect(await origin.locator('time').first().getAttribute('datetime')).toBe(ready.mirror.last_success_at)
    expect(await origin.textContent()).toMatch(
      new RegExp(`It was last synced ${recently}\\.Up to date This server follows it and its last sync succeeded in time\\.$`),
    )
    await shot(page, 'node-mirrored')

    // Lazy archives are fetched from the upstream on their first download, then kept.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download version 1.2.0' }).click(),
    ])
    expect(new Uint8Array(readFileSync((await download.path())!))).toEqual(archives.get('sharpen-pack@1.2.0')!)

    await page.getByRole('complementary', { name: 'About' }).getByRole('link', { name: 'Studio North' }).click()
    await page.getByRole('heading', { level: 1, name: 'Studio North' }).waitFor()
    expect(await page.getByRole('region', { name: 'Mirrored publisher' }).getByRole('link', { name: upstream.url }).count()).toBe(1)
    await finish(w, server.url)
  })

  test('hostile text in a node shows as text and runs nothing', async () => {
    const w = await open(server.url)
    const { page } = w
    await page.goto(`${server.url}/?search=hostile`)
    await page.getByRole('link', { name: HOSTILE_NAME }).click()
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(HOSTILE_NAME)
    expect(await page.getByText(HOSTILE_DESCRIPTION).isVisible()).toBe(true)
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    expect(await page.locator('main img, main script').count()).toBe(0)
    await finish(w, server.url)
  })

  test('the Search button keeps its word whole, narrow or wide (a flex row once squeezed it to "Searc" / "h")', async () => {
    for (const width of [360, 1024, 1600]) {
      const w = await open(server.url, { width })
      await w.page.goto(`${server.url}/`)
      // A word broken over two lines has two line boxes.
      const lines = await w.page.evaluate(
        `(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector('form button[type=submit]'));
          return r.getClientRects().length })()`,
      )
      expect({ width, lines }).toEqual({ width, lines: 1 })
      await finish(w, server.url)
    }
  })

  test('a narrow screen: every page fits its width, and the node page stacks its columns', async () => {
    const w = await open(server.url, { width: 360, height: 740 })
    const { page } = w
    for (const path of [
      '/',
      '/?search=blur',
      '/-/nodes/blur-pack',
      '/-/nodes/linux-tools',
      '/-/nodes/sharpen-pack',
      '/-/publishers/acme',
      '/-/clients',
    ]) {
      await page.goto(server.url + path)
      const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')
      expect({ path, overflow }).toEqual({ path, overflow: 0 })
    }
    await page.goto(`${server.url}/-/nodes/blur-pack`)
    const main = await page.getByRole('heading', { level: 1 }).boundingBox()
    const aside = await page.getByRole('complementary', { name: 'About' }).boundingBox()
    expect(aside!.y).toBeGreaterThan(main!.y)
    await shot(page, 'node-narrow')
    await finish(w, server.url)
  })
})

describe.skipIf(!runBrowserTests)('behind a reverse proxy, under a path prefix', () => {
  let proxy: ReturnType<typeof Bun.serve>
  let behind: Server
  let base = ''

  beforeAll(async () => {
    const target = { url: '' }
    // Serves /mirror/... from the registry with the prefix taken off, as nginx's `location /mirror/` would;
    // anything outside the prefix is a 404, so a link that forgot the prefix fails the walk.
    proxy = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(req) {
        const url = new URL(req.url)
        if (url.pathname !== '/mirror' && !url.pathname.startsWith('/mirror/')) return new Response('outside the prefix', { status: 404 })
        const path = url.pathname.slice('/mirror'.length) || '/'
        return fetch(target.url + path + url.search, { method: req.method, headers: req.headers, redirect: 'manual' })
      },
    })
    base = `http://127.0.0.1:${proxy.port}/mirror`
    behind = await startServer(data, '--public-url', base)
    target.url = behind.url
  })

  afterAll(async () => {
    await behind?.stop()
    proxy?.stop(true)
  })

  test('search, open a node, download and read the clients page, every request under the prefix', async () => {
    const w = await open(`http://127.0.0.1:${proxy.port}`)
    const { page } = w
    await page.goto(`${base}/`)
    await page.getByRole('heading', { name: 'All 5 nodes' }).waitFor()
    // The stylesheet arrived: the layout's grid applies.
    expect(await page.evaluate(`getComputedStyle(document.querySelector('.filters')).display`)).toBe('grid')
    await page.getByLabel('Keyword').pressSequentially('upscale')
    await resultsFor(page, 'search=upscale')
    await page.getByRole('heading', { name: '1 node found' }).waitFor()
    expect(page.url()).toBe(`${base}/?search=upscale`)
    await page.getByRole('link', { name: 'Upscale Kit' }).click()
    await page.getByRole('heading', { level: 1, name: 'Upscale Kit' }).waitFor()
    expect(page.url()).toBe(`${base}/-/nodes/upscale-kit`)
    // comfy-cli cannot be told this address, and the page says so beside the command.
    expect(await page.getByText(`This registry is at ${base}: run comfy-cli where http://localhost:8080 leads here`).isVisible()).toBe(true)
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download version 2.0.0' }).click(),
    ])
    expect(new Uint8Array(readFileSync((await download.path())!))).toEqual(archives.get('upscale-kit@2.0.0')!)
    await page.getByRole('link', { name: 'Acme Nodes' }).first().click()
    await page.getByRole('heading', { level: 1, name: 'Acme Nodes' }).waitFor()
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Clients' }).click()
    expect(await page.locator('#registry-url').textContent()).toBe(base)
    // A differently cased node id redirects to the page at the node's own spelling, still under the prefix.
    await page.goto(`${base}/-/nodes/UPSCALE-KIT`)
    expect(page.url()).toBe(`${base}/-/nodes/upscale-kit`)
    await finish(w, `${base}/`)
  })
})
