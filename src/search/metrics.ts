/** The search engine's state as gauges, read at each scrape: how many nodes the index holds, and whether it answers. */
import { Gauge, type Registry } from 'prom-client'
import type { NodeSearch } from './node-search'

export function registerSearchMetrics(registry: Registry, search: Pick<NodeSearch, 'status'>): void {
  new Gauge({
    name: 'registry_mirror_search_index_nodes',
    help: 'Nodes the in-memory search index holds',
    registers: [registry],
    collect() {
      this.set(search.status().indexed)
    },
  })
  new Gauge({
    name: 'registry_mirror_search_index_ready',
    help: '1 when the search index answers queries, 0 while it warms (the store answers then)',
    registers: [registry],
    collect() {
      this.set(search.status().ready ? 1 : 0)
    },
  })
}
