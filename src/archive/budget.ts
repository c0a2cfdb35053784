/** The time and byte budget of one archive inspection, checked by the readers as they go. */
import { type ArchiveLimits, ArchiveProblem } from './entries'

export const DEFAULT_TIME_BUDGET_MS = 10_000
/** Room for headers, central directories and metadata records on top of the entries' own bytes. */
const METADATA_ALLOWANCE = 64 * 1024 * 1024

export class InspectionBudget {
  /** Bytes read from the archive file. */
  bytesRead = 0
  /** Bytes produced by decompression. */
  bytesInflated = 0
  private readonly deadline: number

  constructor(
    readonly timeMs: number,
    readonly bytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.deadline = now() + timeMs
  }

  /** The budget `limits` give an archive of `archiveSize` bytes. */
  static for(limits: ArchiveLimits, archiveSize: number): InspectionBudget {
    return new InspectionBudget(
      limits.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS,
      limits.byteBudget ?? archiveSize + limits.maxTotalBytes + METADATA_ALLOWANCE,
    )
  }

  /** Records bytes read from the file; throws once the budget is spent. */
  read(bytes: number): void {
    this.bytesRead += bytes
    this.check()
  }

  /** Records bytes produced by decompression; throws once the budget is spent. */
  inflated(bytes: number): void {
    this.bytesInflated += bytes
    this.check()
  }

  private check(): void {
    if (this.bytesRead + this.bytesInflated > this.bytes) {
      throw new ArchiveProblem(`archive inspection ran out of its byte budget (${this.bytes} bytes read and decompressed)`)
    }
    this.checkTime()
  }

  checkTime(): void {
    if (this.now() > this.deadline) throw new ArchiveProblem(timeBudgetReason(this.timeMs))
  }
}

/** Also what the pool answers when it has to stop a worker that did not stop itself in time. */
export function timeBudgetReason(timeMs: number): string {
  return `archive inspection ran out of time (${timeMs / 1000} s)`
}
