import { heapStats } from 'bun:jsc'
import { openStore } from '/work/main/src/store/db'
import { createIndexedSearch } from '/work/main/src/search/indexed-search'
import { silentLog } from '/work/main/src/log'
const heap = () => { Bun.gc(true); return Math.round(heapStats().heapSize / 1048576) }
const rss = () => Math.round(process.memoryUsage().rss / 1048576)
const db = openStore('/tmp/registry-mirror-bench-100000/registry.db')
console.log('before: heap', heap(), 'rss', rss())
const s = createIndexedSearch(db, silentLog)
const t = performance.now()
await s.warm()
console.log('warm', Math.round(performance.now() - t), 'ms; heap', heap(), 'rss', rss())
