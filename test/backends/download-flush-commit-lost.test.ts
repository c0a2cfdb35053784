/**
 * A download-count flush whose COMMIT reached PostgreSQL but whose answer never came back (the server stopped, the
 * connection dropped right after committing) must not be written again: the counts would be added twice. A proxy
 * in front of the database lets the COMMIT through and then drops the connection instead of passing the answer on.
 */
import { afterEach, expect, test } from 'bun:test'
import { SQL, type Socket, type TCPSocketListener } from 'bun'
import { createDownloadCounter } from '../../src/services/downloads'
import { openStore, type Store } from '../../src/store/db'
import { aliceWithPublisher, makeTestApp, publishActive, type TestApp } from '../support/app'
import { describeOnBackends, testSchema } from '../support/backends'

interface Pair {
  client: Socket<Pair>
  upstream?: Socket<Pair>
  toUpstream: Uint8Array[]
  /** A COMMIT went through: whatever the server answers is dropped, and the connection with it. */
  swallow: boolean
}

/** Passes bytes both ways; once `armed`, the first COMMIT reaches the server and its answer never reaches the client. */
function startCommitEater(target: { hostname: string; port: number }) {
  const state = { armed: false, eaten: 0 }
  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const pair: Pair = { client, toUpstream: [], swallow: false }
        client.data = pair
        void Bun.connect<Pair>({
          ...target,
          data: pair,
          socket: {
            open(upstream) {
              pair.upstream = upstream
              for (const chunk of pair.toUpstream.splice(0)) upstream.write(chunk)
            },
            data(upstream, chunk) {
              if (!pair.swallow) return void pair.client.write(chunk)
              state.eaten++
              upstream.end()
              pair.client.end()
            },
            close() {
              pair.client.end()
            },
          },
        })
      },
      data(client, chunk) {
        const pair = client.data
        if (state.armed && /commit/i.test(new TextDecoder().decode(chunk))) {
          state.armed = false
          pair.swallow = true
        }
        if (pair.upstream) pair.upstream.write(chunk)
        else pair.toUpstream.push(new Uint8Array(chunk))
      },
      close(client) {
        client.data.upstream?.end()
      },
    },
  })
  return { port: listener.port, state, stop: () => listener.stop(true) }
}

let t: TestApp | undefined
const closers: (() => Promise<void> | void)[] = []
afterEach(async () => {
  await t?.cleanup()
  for (const close of closers.splice(0)) await close()
})

describeOnBackends('a download-count flush whose commit answer is lost', () => {
  test('is not written again: the counts are never doubled', async () => {
    const schema = await testSchema()
    const direct = new SQL(schema.url)
    const real = new URL(schema.url)
    const proxy = startCommitEater({ hostname: real.hostname, port: Number(real.port) })
    real.port = String(proxy.port)
    const db: Store = await openStore(real.toString(), { poolSize: 2 })
    closers.push(
      schema.drop,
      () => direct.close(),
      () => db.destroy(),
      proxy.stop,
    )
    t = await makeTestApp({ store: db })
    const { pat } = await aliceWithPublisher(t)
    await publishActive(t, { pat, node: 'pack', version: '1.0.0' })
    const counter = createDownloadCounter(t.deps)
    for (let i = 0; i < 5; i++) counter.count('pack')

    proxy.state.armed = true
    await counter.flush()
    expect(proxy.state.eaten).toBe(1) // the commit's answer was dropped
    await counter.flush() // the next second's flush
    await counter.flush()
    const [row] = await direct`select downloads from nodes where id = 'pack'`
    expect(Number(row.downloads)).toBe(5)
    expect(t.logs.some((l) => l.includes('downloads.flush_outcome_unknown'))).toBe(true)
  }, 20_000)
})
