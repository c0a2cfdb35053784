/** The sync's progress bar on a terminal (cli-progress): items, archives, bytes, rate and time left. */
import { SingleBar } from 'cli-progress'
import type { SyncProgress } from './services/mirror/sync'

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024
    i++
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`
}

export interface ProgressDisplay {
  update(p: SyncProgress): void
  stop(): void
}

const FORMATS = {
  metadata: 'metadata |{bar}| {value}/{total} items | {rate}/s | ETA {eta_formatted}',
  archives: 'archives |{bar}| {value}/{total} | {bytes} | {rate}/s | ETA {eta_formatted}',
}

/** One bar per phase (items, then archives), on stderr. */
export function createProgressBar(stream: NodeJS.WritableStream = process.stderr): ProgressDisplay {
  let bar: SingleBar | undefined
  let phase: SyncProgress['phase'] | undefined
  let phaseStarted = performance.now()
  return {
    update(p) {
      if (p.phase !== phase) {
        bar?.stop()
        phase = p.phase
        phaseStarted = performance.now()
        bar = new SingleBar({ stream, format: FORMATS[p.phase], barsize: 30, hideCursor: true, etaBuffer: 50 })
        bar.start(p.total ?? 0, 0, { bytes: formatBytes(0), rate: '0' })
      }
      const seconds = Math.max(0.001, (performance.now() - phaseStarted) / 1000)
      if (p.total !== undefined) bar!.setTotal(Math.max(p.total, p.done))
      bar!.update(p.done, { bytes: formatBytes(p.bytes), rate: (p.done / seconds).toFixed(0) })
    },
    stop: () => bar?.stop(),
  }
}
