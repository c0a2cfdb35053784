/**
 * The operators' metrics: one prom-client registry per server (in `deps.metrics`, never a module global), the
 * instruments the registry's own code counts with, and process gauges read at scrape time. GET /metrics serves
 * the registry in the Prometheus text format.
 *
 * Adding metrics from another feature: create them with prom-client against this registry, where the feature
 * is wired, once per server, e.g.
 *
 *   new Gauge({ name: 'registry_mirror_sync_lag_seconds', help: '...', registers: [deps.metrics.registry],
 *               collect() { this.set(lagNow()) } })
 *
 * `collect` runs at each scrape, so a gauge of state costs nothing between scrapes; counters are incremented
 * where the event is decided. Names start with `registry_mirror_`; labels hold only closed sets of values
 * (route templates, statuses, outcomes), never ids or anything a client sent. Add each new metric to the
 * README's list.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client'

/** Where a cache decides hit or miss, it says so here (one lookup each, or `n` at once). */
export interface CacheCounter {
  hit(n?: number): void
  miss(n?: number): void
}

export type CacheName = 'node_json' | 'list_response'

export interface Metrics {
  /** The one registry served at /metrics; register a feature's own metrics here (see above). */
  readonly registry: Registry
  readonly httpRequests: Counter<'method' | 'route' | 'status'>
  readonly httpDuration: Histogram<'method' | 'route'>
  readonly uploads: Counter<'outcome'>
  readonly uploadBytes: Counter
  readonly downloads: Counter<'kind'>
  readonly downloadBytes: Counter
  readonly searchQueries: Counter<'engine'>
  readonly eventLoopDelay: Histogram
  cache(name: CacheName): CacheCounter
}

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export function createMetrics(): Metrics {
  const registry = new Registry()
  const registers = [registry]
  const cacheLookups = new Counter({
    name: 'registry_mirror_cache_lookups_total',
    help: 'Cache lookups by cache and result (hit or miss); node_json counts nodes, list_response counts requests',
    labelNames: ['cache', 'result'] as const,
    registers,
  })
  processGauges(registry)
  const metrics: Metrics = {
    registry,
    httpRequests: new Counter({
      name: 'registry_mirror_http_requests_total',
      help: 'HTTP requests answered, by method, route template ("unmatched" when no route took it) and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'registry_mirror_http_request_duration_seconds',
      help: 'Time from a request arriving to its response starting (bodies stream after), by method and route template',
      labelNames: ['method', 'route'] as const,
      buckets: SECONDS,
      registers,
    }),
    uploads: new Counter({
      name: 'registry_mirror_archive_uploads_total',
      help: 'Archive uploads through signed URLs, by outcome: the status the version got (active, pending, flagged), or failed',
      labelNames: ['outcome'] as const,
      registers,
    }),
    uploadBytes: new Counter({ name: 'registry_mirror_archive_upload_bytes_total', help: 'Bytes of archives stored', registers }),
    downloads: new Counter({
      name: 'registry_mirror_downloads_total',
      help: 'Installs (counted downloads) and archive responses: whole (200) or a byte range (206)',
      labelNames: ['kind'] as const,
      registers,
    }),
    downloadBytes: new Counter({
      name: 'registry_mirror_archive_download_bytes_total',
      help: 'Bytes of archive bodies answered (200 and 206 responses)',
      registers,
    }),
    searchQueries: new Counter({
      name: 'registry_mirror_search_queries_total',
      help: 'Node list and search queries run by the search engine (index, or store while the index warms); cached answers are not counted',
      labelNames: ['engine'] as const,
      registers,
    }),
    eventLoopDelay: new Histogram({
      name: 'registry_mirror_event_loop_delay_seconds',
      help: 'How late a timer fired, sampled every 100 ms: time the event loop was blocked',
      buckets: SECONDS,
      registers,
    }),
    cache(name) {
      const hits = cacheLookups.labels(name, 'hit')
      const misses = cacheLookups.labels(name, 'miss')
      return { hit: (n = 1) => n > 0 && hits.inc(n), miss: (n = 1) => n > 0 && misses.inc(n) }
    },
  }
  // Every series that can appear starts at 0, so that rate() sees its first increment and dashboards show zeros.
  for (const cache of ['node_json', 'list_response']) for (const result of ['hit', 'miss']) cacheLookups.labels(cache, result).inc(0)
  for (const kind of ['install', 'archive', 'archive_range']) metrics.downloads.labels(kind).inc(0)
  for (const outcome of ['active', 'pending', 'flagged', 'failed']) metrics.uploads.labels(outcome).inc(0)
  for (const engine of ['index', 'store']) metrics.searchQueries.labels(engine).inc(0)
  return metrics
}

/** Memory, CPU and start time, read at each scrape (prom-client's defaults report nonsense on Bun). */
function processGauges(registry: Registry): void {
  const registers = [registry]
  const started = Math.round(Date.now() / 1000 - process.uptime())
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes',
    registers,
    collect() {
      this.set(process.memoryUsage.rss())
    },
  })
  // Only the used heap: Bun's heapTotal is not a bound on it (it reports used above total).
  new Gauge({
    name: 'registry_mirror_js_heap_used_bytes',
    help: 'Bytes of JavaScript heap in use',
    registers,
    collect() {
      this.set(process.memoryUsage().heapUsed)
    },
  })
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent in seconds',
    registers,
    collect() {
      const { user, system } = process.cpuUsage()
      this.reset()
      this.inc((user + system) / 1e6)
    },
  })
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch in seconds', registers }).set(
    started,
  )
}

/**
 * Samples event-loop delay into `metrics.eventLoopDelay` by how late a timer fires (Bun's
 * perf_hooks.monitorEventLoopDelay is a stub that reports nothing). Returns the function that stops it.
 */
export function monitorEventLoop(metrics: Metrics, everyMs = 100): () => void {
  let timer: ReturnType<typeof setTimeout>
  const schedule = () => {
    const due = performance.now() + everyMs
    timer = setTimeout(() => {
      metrics.eventLoopDelay.observe(Math.max(0, performance.now() - due) / 1000)
      schedule()
    }, everyMs)
    timer.unref()
  }
  schedule()
  return () => clearTimeout(timer)
}
