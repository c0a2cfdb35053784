/** Starts registry-mirror (the built binary, else from source) on 127.0.0.1:0 for a benchmark, and reads its memory. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'

export interface BenchServer {
  url: string
  pid: number
  /** Where its log lines go (a file, as an operator's would). */
  logFile: string
  rssBytes(): number
  /** The highest resident memory since start (the kernel's VmHWM). */
  peakRssBytes(): number
  stop(): Promise<void>
}

/**
 * Logs at the default level (`info`: one line per request, as operators run it) into `<dataDir>.log`,
 * unless `extra` sets --log-level.
 */
export async function startServer(dataDir: string, extra: string[] = []): Promise<BenchServer> {
  const bin = resolve('dist/registry-mirror')
  const cmd = existsSync(bin) ? [bin] : [process.execPath, resolve('src/main.ts')]
  const logFile = `${dataDir}.log`
  writeFileSync(logFile, '')
  const { url, proc } = await spawnListening([...cmd, 'serve', '--port', '0', '--data', dataDir, ...extra], logFile)
  const status = (field: string) =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024
  return {
    url,
    pid: proc.pid,
    logFile,
    rssBytes: () => status('VmRSS'),
    peakRssBytes: () => status('VmHWM'),
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
  }
}

/** Spawns a server that prints `listening on URL` first; its stderr goes to `logFile`. */
export async function spawnListening(cmd: string[], logFile: string) {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: Bun.file(logFile) })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`${cmd[0]} exited before listening (see ${logFile})`)
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { url: text.split('\n')[0]!.replace('listening on ', ''), proc }
}

/** Waits until the server answers and its search index is complete; returns the milliseconds that took. */
export async function waitForIndex(url: string): Promise<number> {
  const t0 = performance.now()
  for (;;) {
    const ready = await fetch(`${url}/ready`).then(
      async (r) => ((await r.json()) as { search: { ready: boolean } }).search.ready,
      () => false,
    )
    if (ready) return performance.now() - t0
    await Bun.sleep(100) // a probe costs the server a store count and a disk write: not too often
  }
}

/** Samples `read` every `ms` until stopped; returns the maximum seen. */
export function sampleMax(read: () => number, ms = 5) {
  let max = read()
  const timer = setInterval(() => (max = Math.max(max, read())), ms)
  return () => {
    clearInterval(timer)
    return Math.max(max, read())
  }
}

export const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

/**
 * CPU seconds a process, or one of its threads, has used (user + system, from /proc): the cost per request it gives
 * is steadier than a throughput on a machine other work shares.
 */
export function cpuSeconds(pid: number, thread?: number): number {
  const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
