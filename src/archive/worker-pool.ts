/**
 * A few reusable inspection workers and a queue: archive checks never run on the event loop, at most `size` run
 * at once, and a worker that overruns its time budget (or dies) is terminated, its job answered, and replaced.
 */
import { DEFAULT_TIME_BUDGET_MS, timeBudgetReason } from './budget'
import type { Inspection } from './check'
import type { ArchiveLimits } from './entries'
import type { InspectReply, InspectRequest } from './inspect-worker'

export interface PoolOptions {
  /** The worker script; the compiled binary embeds it as an entrypoint (see scripts/build.ts). */
  workerUrl: URL
  /** Workers running at once. */
  size: number
  /** Time past the budget the worker gets to answer for itself before the pool terminates it. */
  graceMs: number
  /** An idle worker is stopped after this long, giving its memory back. */
  idleMs: number
}

interface Job {
  id: number
  path: string
  limits: ArchiveLimits
  resolve(inspection: Inspection): void
  reject(err: Error): void
}

interface Slot {
  worker: Worker
  /** The worker has loaded its script: a failure before then is a broken deployment, not a verdict. */
  ready: boolean
  job?: Job
  timer?: ReturnType<typeof setTimeout>
}

export class InspectionPool {
  private readonly slots = new Set<Slot>()
  private readonly idle: Slot[] = []
  private readonly queue: Job[] = []
  private nextId = 1
  /** Workers started so far, replacements included. */
  started = 0

  constructor(private readonly options: PoolOptions) {}

  run(path: string, limits: ArchiveLimits): Promise<Inspection> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, path, limits, resolve, reject })
      this.dispatch()
    })
  }

  /** Jobs waiting for a worker, and jobs running. */
  get load(): { queued: number; running: number } {
    return { queued: this.queue.length, running: this.slots.size - this.idle.length }
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.idle.pop() ?? (this.slots.size < this.options.size ? this.spawn() : undefined)
      if (!slot) return
      this.assign(slot, this.queue.shift()!)
    }
  }

  private spawn(): Slot {
    // smol: a smaller JS heap per worker; the work is native inflate and a linear scan, not allocation-heavy.
    const slot: Slot = { worker: new Worker(this.options.workerUrl, { smol: true }), ready: false }
    this.started++
    this.slots.add(slot)
    slot.worker.onmessage = (event: MessageEvent<InspectReply>) => this.answer(slot, event.data)
    // What went wrong inside stays out of the reason, which the publisher sees.
    slot.worker.onerror = () => this.fail(slot, 'archive inspection failed: its worker crashed')
    slot.worker.addEventListener('close', () => this.fail(slot, 'archive inspection failed: its worker stopped'))
    return slot
  }

  private assign(slot: Slot, job: Job): void {
    slot.job = job
    clearTimeout(slot.timer)
    // A running check keeps the process alive; an idle worker does not.
    slot.worker.ref()
    // Posted at once; a worker still loading receives it when its script has run.
    slot.worker.postMessage({ id: job.id, path: job.path, limits: job.limits } satisfies InspectRequest)
    if (slot.ready) this.startClock(slot, job)
  }

  /** The time budget counts from when the worker can work on the job, not from when it started loading. */
  private startClock(slot: Slot, job: Job): void {
    const budgetMs = job.limits.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS
    slot.timer = setTimeout(() => this.fail(slot, timeBudgetReason(budgetMs)), budgetMs + this.options.graceMs)
  }

  private answer(slot: Slot, reply: InspectReply): void {
    if ('ready' in reply) {
      slot.ready = true
      if (slot.job) this.startClock(slot, slot.job)
      return
    }
    const job = slot.job
    if (!job || reply.id !== job.id) return
    clearTimeout(slot.timer)
    slot.job = undefined
    if ('inspection' in reply) job.resolve(reply.inspection)
    else job.reject(new Error(reply.fault))
    slot.worker.unref()
    this.idle.push(slot)
    slot.timer = setTimeout(() => this.retire(slot), this.options.idleMs)
    slot.timer.unref()
    this.dispatch()
  }

  /**
   * The worker overran, crashed or exited: its job is answered as invalid and the worker is dropped for a fresh
   * one. A worker that fails before it has loaded says nothing about the archive: the job fails loudly instead
   * of flagging every upload.
   */
  private fail(slot: Slot, reason: string): void {
    if (!this.slots.has(slot)) return
    const job = slot.job
    this.retire(slot)
    if (!slot.ready) job?.reject(new Error(`the archive inspection worker did not start (${this.options.workerUrl.href})`))
    else job?.resolve({ ok: false, format: undefined, reason })
    this.dispatch()
  }

  private retire(slot: Slot): void {
    clearTimeout(slot.timer)
    this.slots.delete(slot)
    const at = this.idle.indexOf(slot)
    if (at >= 0) this.idle.splice(at, 1)
    slot.worker.terminate()
  }
}
