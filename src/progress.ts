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

export function createProgressBar(stream: NodeJS.WritableStream = process.stderr): ProgressDisplay {
  const bar = new SingleBar({
    stream,
    format: '{phase} |{bar}| {value}/{total} {unit} | {bytes} | {rate}/s | ETA {eta_formatted}',
    barsize: 30,
    hideCursor: true,
    clearOnComplete: false,
    etaBuffer: 50,
  })
  let phase: SyncProgress['phase'] | undefined
  let phaseStarted = performance.now()
  return {
    update(p) {
      if (p.phase !== phase) {
        if (phase) bar.stop()
        phase = p.phase
        phaseStarted = performance.now()
        bar.start(p.total ?? 0, 0, { phase: p.phase.padEnd(8), unit: p.phase === 'archives' ? 'archives' : 'items', bytes: '', rate: '0' })
      }
      const seconds = Math.max(0.001, (performance.now() - phaseStarted) / 1000)
      if (p.total !== undefined) bar.setTotal(Math.max(p.total, p.done))
      bar.update(p.done, { bytes: formatBytes(p.bytes), rate: (p.done / seconds).toFixed(0) })
    },
    stop: () => phase && bar.stop(),
  }
}
