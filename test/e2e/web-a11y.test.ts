/**
 * The web pages as a keyboard, screen-reader and small-screen user meets them, in Debian's Chromium against the
 * compiled executable (set up as web.test.ts does): focus while results change, contrast of what tells a control
 * apart, links that leave the site, hostile fields that must not reach another host, narrow screens.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { makeZip } from '../support/archives'
import { ensureBinary, startServer, type Server } from '../support/binary'

const CHROMIUM = '/usr/bin/chromium'
const data = mkdtempSync(join(tmpdir(), 'registry-mirror-web-a11y-'))
const LONG_ID = `${'x'.repeat(50)}-${'y'.repeat(49)}`
const LONG_WORD = 'Supercalifragilistic'.repeat(9)

const archive = (classes: string[]) =>
  Buffer.from(
    makeZip([{ name: '__init__.py', data: `NODE_CLASS_MAPPINGS = {${classes.map((c) => `"${c}": object`).join(', ')}}\n` }]),
  ).toString('base64')

/** Enough nodes for a second page of results; one hostile node and one of long unbroken words. */
const FIXTURE = {
  time: '2026-01-01T00:00:00.000Z',
  users: [{ id: 'alice' }, { id: 'eve' }],
  publishers: [
    { id: 'acme', name: 'Acme Nodes', website: 'https://acme.example', members: [{ user: 'alice', role: 'owner' }] },
    {
      id: 'evil',
      name: '<script>window.pwned=1</script>Evil',
      website: 'javascript:window.pwned=2',
      logo: 'https://evil.example/logo.png',
      members: [{ user: 'eve', role: 'owner' }],
    },
    { id: 'quiet', name: 'Quiet Publisher' },
  ],
  nodes: [
    {
      id: 'blur-pack',
      publisher: 'acme',
      name: 'Blur Pack',
      description: 'Gaussian blur.',
      repository: 'https://github.com/acme/blur-pack',
      versions: [
        { version: '1.0.0', changelog: 'First.', archive_base64: archive(['ImageBlur']) },
        { version: '1.1.0', changelog: 'Flagged.', status: 'flagged', status_reason: 'Under review.' },
      ],
    },
    {
      id: 'hostile-pack',
      publisher: 'evil',
      name: `<img src="https://evil.example/x.png" onerror="window.pwned=3">"Hostile" 'pack'`,
      description: '<script>window.pwned=4</script> javascript:alert(1)',
      repository: 'javascript:window.pwned=5',
      icon: 'https://evil.example/icon.png',
      banner_url: 'https://evil.example/banner.png',
      versions: [{ version: '1.0.0', changelog: '<script>window.pwned=6</script>', archive_base64: archive(['Harmless']) }],
    },
    {
      id: LONG_ID,
      publisher: 'acme',
      name: LONG_WORD,
      description: LONG_WORD.repeat(3),
      repository: `https://github.com/${LONG_WORD}/${LONG_WORD}`,
      versions: [
        {
          version: `0.3.0-beta.${'1234567890'.repeat(6)}`,
          changelog: LONG_WORD.repeat(2),
          archive_base64: archive([`${LONG_WORD.slice(0, 150)}Node`]),
        },
      ],
    },
    ...Array.from({ length: 22 }, (_, i) => ({
      id: `filler-${String(i).padStart(2, '0')}`,
      publisher: 'acme',
      name: `Filler ${i}`,
      description: 'A node that fills the list.',
      versions: [{ version: '1.0.0' }],
    })),
  ],
}

const browserMissing = !existsSync(CHROMIUM)
if (browserMissing && !process.env.CI) console.warn(`skipping the accessibility browser tests: Chromium is missing (${CHROMIUM})`)
const runBrowserTests = !browserMissing || Boolean(process.env.CI)

let server: Server
let browser: Browser

beforeAll(async () => {
  if (!runBrowserTests) return
  if (browserMissing) throw new Error(`Chromium is missing (${CHROMIUM}): install it with "apt-get install -y chromium"`)
  await ensureBinary()
  const fixture = join(data, 'fixture.json')
  writeFileSync(fixture, JSON.stringify(FIXTURE))
  server = await startServer(data, '--fixture', fixture)
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
  })
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  rmSync(data, { recursive: true, force: true })
})

interface Watched {
  page: Page
  context: BrowserContext
  /** Every address the page asked for, so that a test can say none left the server. */
  requests: string[]
}

async function open(opts: { width?: number; colorScheme?: 'light' | 'dark' } = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1024, height: 720 },
    colorScheme: opts.colorScheme ?? 'light',
  })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url })
  const page = await context.newPage()
  page.setDefaultTimeout(5000)
  const watched: Watched = { page, context, requests: [] }
  page.on('request', (req) => watched.requests.push(req.url()))
  return watched
}

/** The focused element, described for a failure message. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const { document } = globalThis as any
    const el = document.activeElement
    return el === document.body || !el ? 'nothing (the body)' : `${el.tagName.toLowerCase()}: ${el.textContent.trim()}`
  })

/** Waits until the live results are those of the address's query, and no search is under way. */
const resultsFor = (page: Page, search: string) =>
  page.waitForFunction((s) => {
    const { location, document } = globalThis as any
    return location.search === s && !document.querySelector('#results[aria-busy]')
  }, search)

/**
 * WCAG contrast ratios measured in the page: for each form field, its border against the background around it and
 * its own, and its placeholder against its own (colours as computed, translucent ones laid over what is behind).
 */
const fieldContrasts = (page: Page) =>
  page.evaluate(() => {
    const { document, getComputedStyle } = globalThis as any
    type Rgba = number[]
    const parse = (c: string): Rgba => {
      const [r, g, b, a = 1] = c.match(/[\d.]+/g)!.map(Number)
      return [r!, g!, b!, a]
    }
    const over = (top: Rgba, below: Rgba): Rgba => [0, 1, 2].map((i) => top[i]! * top[3]! + below[i]! * (1 - top[3]!)).concat(1)
    /** The colour behind an element: its own background and its ancestors', down to the first opaque one. */
    const behind = (el: any): Rgba => {
      const layers: Rgba[] = []
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor)
        if (c[3]! > 0) layers.unshift(c)
        if (c[3] === 1) break
      }
      return layers.reduce((below, top) => over(top, below), [255, 255, 255, 1])
    }
    const luminance = (c: Rgba) =>
      [0, 1, 2]
        .map((i) => c[i]! / 255)
        .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4))
        .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i]!, 0)
    const ratio = (a: Rgba, b: Rgba) => {
      const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
      return Math.round(((hi! + 0.05) / (lo! + 0.05)) * 100) / 100
    }
    return [...document.querySelectorAll('input:not([type=hidden])')].map((input: any) => {
      const own = behind(input)
      const around = behind(input.parentElement)
      const border = over(parse(getComputedStyle(input).borderTopColor), own)
      const placeholder = over(parse(getComputedStyle(input, '::placeholder').color), own)
      return {
        id: input.id,
        border: Math.min(ratio(border, own), ratio(border, around)),
        placeholder: ratio(placeholder, own),
      }
    })
  })

describe.skipIf(!runBrowserTests)('the web pages for keyboard, screen-reader and small-screen users', () => {
  test('a Tab pressed while results are on their way keeps focus in them when they arrive', async () => {
    const { page, context } = await open()
    await page.goto(`${server.url}/`)
    // Hold the results back until the Tab has moved focus into the old ones, as a slow network or a fast typist does.
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route('**/-/results*', async (route) => {
      await held
      await route.continue()
    })
    await page.getByLabel('Accelerator').fill('GPU')
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('a: This search in the JSON API')
    // While they are on their way the old results keep their full contrast (dimmed, they fell below 4.5:1).
    const results = page.locator('#results[aria-busy=true]')
    expect(await results.evaluate((el) => (globalThis as any).getComputedStyle(el).opacity)).toBe('1')
    release()
    await resultsFor(page, '?supported_accelerator=GPU')
    expect(await focused(page)).toBe('a: This search in the JSON API')
    // The status says how many, in words; the list itself is not read out.
    expect(await page.locator('#results-status').textContent()).toBe(await page.locator('#results h2').textContent())
    expect(await page.locator('#results-status').textContent()).toMatch(/^\d+ nodes? found$/)

    // A focused link that the new results no longer have: focus goes to the results, not to the page's start.
    await page.goto(`${server.url}/`)
    await page.getByRole('link', { name: 'Next page' }).focus()
    await page.getByLabel('Keyword').evaluate((input: any) => {
      input.value = 'blur'
      input.dispatchEvent(new Event('input', { bubbles: true }))
    })
    await resultsFor(page, '?search=blur')
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toBe('results')
    await context.close()
  })

  test('form fields are told apart from the page by a border of 3:1 or more, in light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context } = await open({ colorScheme })
      await page.goto(`${server.url}/`)
      const fields = await fieldContrasts(page)
      expect(fields.length).toBe(5)
      // The ratio itself in a failure, and a fixed word when it is enough.
      for (const { id, border } of fields)
        expect({ colorScheme, id, border: border >= 3 ? 'at least 3' : border }).toEqual({ colorScheme, id, border: 'at least 3' })
      await context.close()
    }
  })

  test('the hints in the search fields (their placeholders) have text contrast of 4.5:1 or more, light and dark', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context } = await open({ colorScheme })
      await page.goto(`${server.url}/`)
      for (const { id, placeholder } of await fieldContrasts(page))
        expect({ colorScheme, id, placeholder: placeholder >= 4.5 ? 'at least 4.5' : placeholder }).toEqual({
          colorScheme,
          id,
          placeholder: 'at least 4.5',
        })
      await context.close()
    }
  })

  test('links to other sites say so, to the eye and to a screen reader; a javascript: repository is no link', async () => {
    const { page, context, requests } = await open()
    await page.goto(`${server.url}/-/nodes/blur-pack`)
    const about = page.getByRole('complementary', { name: 'About' })
    const repository = about.getByRole('link', { name: 'https://github.com/acme/blur-pack (external site)', exact: true })
    expect(await repository.count()).toBe(1)
    expect(await repository.evaluate((a: any) => (globalThis as any).getComputedStyle(a, '::after').content)).toContain('↗')
    // Links within the site carry no such mark.
    expect(await about.getByRole('link', { name: 'Acme Nodes', exact: true }).count()).toBe(1)

    await page.goto(`${server.url}/-/nodes/hostile-pack`)
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0)
    expect(await page.getByRole('complementary', { name: 'About' }).getByText('javascript:window.pwned=5').isVisible()).toBe(true)
    expect(await page.evaluate('window.pwned')).toBeUndefined()
    await context.close()
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([])
  })

  test("text follows the reader's default font size, and the search form still fits a narrow screen with it", async () => {
    // A larger default font size in the browser's settings is the root element's font size; the CSP forbids the
    // style element that stands in for it here, so this context bypasses it.
    const context = await browser.newContext({ viewport: { width: 360, height: 720 }, bypassCSP: true })
    const page = await context.newPage()
    for (const [root, path] of [
      ['32px', '/-/nodes/blur-pack'],
      ['24px', '/'],
    ] as const) {
      await page.goto(server.url + path)
      await page.addStyleTag({ content: `html { font-size: ${root} }` })
      const { font, overflow } = await page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as any
        const { scrollWidth, clientWidth } = document.documentElement
        return { font: getComputedStyle(document.querySelector('main p')).fontSize, overflow: scrollWidth - clientWidth }
      })
      expect({ path, font, overflow }).toEqual({ path, font: root, overflow: 0 })
    }
    await context.close()
  })

  test('a live search that fails says so on screen, and Search then loads the results page as it says', async () => {
    const { page, context } = await open()
    await page.goto(`${server.url}/`)
    await page.route('**/-/results*', (route) => route.abort())
    await page.evaluate('window.sameDocument = true')
    await page.getByLabel('Keyword').pressSequentially('blur')
    const status = page.locator('#results-status')
    await page.getByText('Search failed; press Search to load the page instead.').waitFor()
    // Seen, not only heard: a sighted reader would otherwise look at the old results as if they were the new.
    expect((await status.boundingBox())!.width).toBeGreaterThan(100)
    await page.getByLabel('Keyword').press('Enter')
    await page.getByRole('heading', { level: 2, name: '1 node found' }).waitFor()
    // The form sent every field, the empty ones too; the address shown is the search's own, without them.
    expect(page.url()).toBe(`${server.url}/?search=blur`)
    expect(await page.evaluate('window.sameDocument')).toBeUndefined()
    await context.close()
  })

  test('results as you type retitle the page as loading the address would', async () => {
    const { page, context } = await open()
    await page.goto(`${server.url}/`)
    await page.getByLabel('Keyword').pressSequentially('blur')
    await resultsFor(page, '?search=blur')
    expect(await page.title()).toBe('Nodes matching “\u2068blur\u2069” · registry-mirror')
    await page.getByLabel('Keyword').fill('')
    await resultsFor(page, '')
    expect(await page.title()).toBe('Browse nodes · registry-mirror')
    await context.close()
  })

  test('by keyboard alone: skip link first, a visible focus ring on every stop, copy and download reachable', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const { page, context } = await open({ colorScheme })
      await page.goto(`${server.url}/-/nodes/blur-pack`)
      const stops: { name: string; ring: boolean }[] = []
      for (let i = 0; i < 30; i++) {
        await page.keyboard.press('Tab')
        const stop = await page.evaluate(() => {
          const { document, getComputedStyle } = globalThis as any
          const el = document.activeElement
          if (!el || el === document.body) return undefined
          const style = getComputedStyle(el)
          const ring = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
          return { name: (el.getAttribute('aria-label') ?? el.textContent).trim(), ring }
        })
        if (!stop || stops.some((s) => s.name === stop.name && s === stops[0])) break
        stops.push(stop)
      }
      expect(stops[0]!.name).toBe('Skip to content')
      expect(stops.filter((s) => !s.ring)).toEqual([])
      const names = stops.map((s) => s.name)
      expect(names).toContain('Copy: comfy-cli install command')
      expect(names).toContain('Download version 1.0.0')
      expect(names).toContain('Download 1.0.0')

      await page.getByRole('button', { name: 'Copy: comfy-cli install command' }).focus()
      await page.keyboard.press('Enter')
      await page.getByRole('status').filter({ hasText: 'Copied.' }).waitFor()
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe('ENVIRONMENT=dev comfy node registry-install blur-pack')
      // A second press is announced again: the live region changes (emptied, then the same words), not stays put.
      await page.evaluate(() => {
        const { document, MutationObserver } = globalThis as any
        const note = document.getElementById(`${document.activeElement.dataset.copy}-status`)
        ;(globalThis as any).heard = []
        new MutationObserver(() => (globalThis as any).heard.push(note.textContent)).observe(note, { childList: true })
      })
      await page.keyboard.press('Enter')
      await page.waitForFunction(() => (globalThis as any).heard.at(-1) === 'Copied.')
      expect(await page.evaluate(() => (globalThis as any).heard)).toEqual(['', 'Copied.'])
      await context.close()
    }
  })

  test('320 px wide (400% zoom): no page scrolls sideways, long unbroken names, ids and addresses wrap', async () => {
    const { page, context, requests } = await open({ width: 320 })
    for (const path of [
      '/',
      `/?search=${LONG_WORD}`,
      '/-/nodes/blur-pack',
      `/-/nodes/${LONG_ID}`,
      '/-/nodes/hostile-pack',
      '/-/publishers/evil',
      '/-/publishers/quiet',
      '/-/clients',
      '/-/nodes/no-such-node',
    ]) {
      await page.goto(server.url + path)
      const overflow = await page.evaluate(() => {
        const { document } = globalThis as any
        return document.documentElement.scrollWidth - document.documentElement.clientWidth
      })
      expect({ path, overflow }).toEqual({ path, overflow: 0 })
      expect(await page.evaluate('window.pwned')).toBeUndefined()
    }
    await context.close()
    // The hostile node's icon and banner, and its publisher's logo, name another host: nothing went there.
    expect(requests.filter((url) => !url.startsWith(server.url))).toEqual([])
  })
})
