/**
 * KNOWN FAILING (found while checking the README, not fixed here): the search page's "Search" button breaks its
 * one word over two lines ("Searc" / "h") at every width since buttons got `overflow-wrap: anywhere` (5ea2dfd):
 * that lets the flex row squeeze the button below its word's width. The README's screenshots predate it.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { ensureBinary, startServer, type Server } from '../support/binary'

const CHROMIUM = '/usr/bin/chromium'
const data = mkdtempSync(join(tmpdir(), 'registry-mirror-search-button-'))
let server: Server | undefined
let browser: Browser | undefined

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return
  await ensureBinary()
  server = await startServer(data)
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu'] })
})

afterAll(async () => {
  await browser?.close()
  await server?.stop()
  rmSync(data, { recursive: true, force: true })
})

test.skipIf(!existsSync(CHROMIUM))('the Search button keeps its word on one line, narrow or wide', async () => {
  for (const width of [1024, 1280, 1600]) {
    const page = await browser!.newPage({ viewport: { width, height: 720 }, deviceScaleFactor: 1 })
    await page.goto(`${server!.url}/`)
    // A word broken over two lines has two line boxes.
    const lines = await page.evaluate(
      `(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector('form button[type=submit]'));
        return r.getClientRects().length })()`,
    )
    await page.close()
    expect({ width, lines }).toEqual({ width, lines: 1 })
  }
})
