/** Starts registry-mirror (the built binary, else from source) on 127.0.0.1:0 for a benchmark, and reads its memory. */
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'

export interface BenchServer {
  url: string
  pid: number
  rssBytes(): number
  stop(): Promise<void>
}

export async function startServer(dataDir: string, extra: string[] = []): Promise<BenchServer> {
  const bin = resolve('dist/registry-mirror')
  const cmd = existsSync(bin) ? [bin] : [process.execPath, resolve('src/main.ts')]
  const proc = Bun.spawn([...cmd, 'serve', '--port', '0', '--data', dataDir, '--log-level', 'warn', ...extra], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('server exited before listening')
    text += new TextDecoder().decode(value)
  }
  return {
    url: text.split('\n')[0]!.replace('listening on ', ''),
    pid: proc.pid,
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024,
    async stop() {
      proc.kill('SIGTERM')
      await proc.exited
    },
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
