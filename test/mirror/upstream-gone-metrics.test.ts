/**
 * `serve`'s mirroring with its upstream gone, as wired for real (startMirroring): the lazy client it makes fails a
 * download fast with the configured --sync-timeout and retries, logs the host going down, and counts it in /metrics
 * with no label naming a host.
 */
import { afterEach, expect, test } from 'bun:test'
import { loadConfig } from '../../src/config'
import { startMirroring } from '../../src/serve-mirror'
import { lazyMirrorOfProxiedUpstream, MISSING, timed, type GoneUpstream } from '../support/gone-upstream'
import { parseScrape } from '../support/metrics'

let gone: GoneUpstream | undefined
let stopMirroring: (() => Promise<void>) | undefined
afterEach(async () => {
  await stopMirroring?.()
  await gone?.stop()
  gone = stopMirroring = undefined
})

test('serve with its upstream refusing connections: a fast 502, a log line, and the metrics', async () => {
  gone = await lazyMirrorOfProxiedUpstream({ timeoutMs: 5_000 })
  const { config } = loadConfig({ flags: {}, env: {} })
  const mirroring = await startMirroring(gone.mirror.deps, config!) // the defaults: --sync-timeout 30, --sync-retries 5
  stopMirroring = () => mirroring.stop()
  const scrape = async () => parseScrape(await (await gone!.mirror.app.request('/metrics')).text())
  const before = (await scrape()).filter((s) => s.name.startsWith('registry_mirror_upstream_'))
  expect(before).toEqual([
    { name: 'registry_mirror_upstream_hosts_down', labels: {}, value: 0 },
    { name: 'registry_mirror_upstream_changes_total', labels: { to: 'down' }, value: 0 },
    { name: 'registry_mirror_upstream_changes_total', labels: { to: 'up' }, value: 0 },
  ])
  gone.proxy.cut()
  const first = await timed(gone.mirror, MISSING)
  expect(first.res.status).toBe(502)
  expect(first.ms).toBeLessThan(3_000)
  expect((await timed(gone.mirror, MISSING)).ms).toBeLessThan(500)
  const after = (await scrape()).filter((s) => s.name.startsWith('registry_mirror_upstream_'))
  expect(after).toEqual([
    { name: 'registry_mirror_upstream_hosts_down', labels: {}, value: 1 },
    { name: 'registry_mirror_upstream_changes_total', labels: { to: 'down' }, value: 1 },
    { name: 'registry_mirror_upstream_changes_total', labels: { to: 'up' }, value: 0 },
  ])
  const line = gone.mirror.logs.map((l) => JSON.parse(l)).find((l) => l.event === 'mirror.upstream_down')
  expect(line).toMatchObject({ level: 'warn', upstream: gone.host, retry_in_s: 30 })
}, 60_000)
