/** Checks an uploaded archive (zip or tar.gz) and extracts the host node names it provides. */
import { type ArchiveEntry, type ArchiveLimits, ArchiveProblem, checkEntryName } from './entries'
import { extractHostNodeNames } from './host-nodes'
import { walkTarGz } from './tar'
import { walkZip } from './zip'

export type ArchiveFormat = 'zip' | 'tar.gz'

export type Inspection =
  { ok: true; format: ArchiveFormat; hostNodes: string[] } | { ok: false; format: ArchiveFormat | undefined; reason: string }

/** Python source read for extraction, over all entries of one archive. */
const PYTHON_BUDGET = 64 * 1024 * 1024
const MAX_HOST_NODES = 10_000
const MAX_HOST_NODE_NAME = 200

async function sniff(path: string): Promise<ArchiveFormat | undefined> {
  const head = new Uint8Array(await Bun.file(path).slice(0, 4).arrayBuffer())
  if (head[0] === 0x50 && head[1] === 0x4b) return 'zip'
  if (head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz'
  return undefined
}

export async function inspectArchive(path: string, limits: ArchiveLimits): Promise<Inspection> {
  const format = await sniff(path)
  if (!format) return { ok: false, format, reason: 'not a zip or tar.gz archive' }
  const names = new Set<string>()
  let entries = 0
  let total = 0
  let pythonRead = 0
  const visitor = {
    wants: (e: ArchiveEntry) => e.name.endsWith('.py') && pythonRead + e.size <= PYTHON_BUDGET,
    visit(e: ArchiveEntry, content?: Uint8Array) {
      checkEntryName(e.name)
      if (e.kind === 'link') throw new ArchiveProblem(`archive entry "${e.name}" is a link; links are not allowed`)
      entries++
      total += e.size
      if (total > limits.maxTotalBytes) throw new ArchiveProblem(`archive expands beyond ${limits.maxTotalBytes} bytes`)
      if (!content) return
      pythonRead += content.byteLength
      for (const name of extractHostNodeNames(new TextDecoder().decode(content))) {
        if (name && name.length <= MAX_HOST_NODE_NAME && names.size < MAX_HOST_NODES) names.add(name)
      }
    },
  }
  try {
    await (format === 'zip' ? walkZip : walkTarGz)(path, limits, visitor)
  } catch (err) {
    if (err instanceof ArchiveProblem) return { ok: false, format, reason: err.message }
    throw err
  }
  if (entries === 0) return { ok: false, format, reason: 'archive is empty' }
  return { ok: true, format, hostNodes: [...names].sort() }
}
