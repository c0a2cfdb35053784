/**
 * A TCP proxy on 127.0.0.1 in front of a test backend, to make it go away and come back without touching the
 * backend itself (other tests share it): `cut()` drops every connection and refuses new ones, `blackHole()` drops
 * them and then accepts connections but never answers (a host gone behind a firewall that drops packets),
 * `restore()` passes connections on again on the same port. `watch` makes it go at a chosen point: it sees each message a client sends (a query
 * naming a table, a COMMIT) and may cut there, or let the message through and lose the backend's answer.
 */
import type { Socket, TCPSocketListener } from 'bun'

interface Pair {
  upstream?: Socket<Pair>
  /** The backend's next answer is lost: the connection drops in its place. */
  loseAnswer: boolean
  /** Bytes not yet taken by each side's socket (a write may take part of a chunk; the rest waits for drain). */
  toUpstream: Uint8Array[]
  toClient: Uint8Array[]
  client: Socket<Pair>
}

/** Writes what the socket takes now and keeps the rest, in order, for its drain. */
function send(socket: Socket<Pair> | undefined, queue: Uint8Array[], chunk?: Uint8Array) {
  if (chunk) queue.push(new Uint8Array(chunk))
  while (socket && queue.length) {
    const head = queue[0]!
    const written = socket.write(head)
    if (written < head.byteLength) {
      queue[0] = head.subarray(Math.max(0, written))
      return
    }
    queue.shift()
  }
}

export interface TcpProxy {
  port: number
  cut(): void
  blackHole(): void
  restore(): void
  stop(): void
  /** How many answers `watch` had lost. */
  answersLost(): number
}

/**
 * What to do with a client's message: `cut` drops every connection and refuses new ones before it reaches the
 * backend (the backend going away mid-command); `lose-answer` passes it on, then drops its connection in place of
 * the answer (the backend applied it and the client never hears: a server stopping right after a COMMIT).
 */
export type Watch = (message: string) => 'cut' | 'lose-answer' | undefined

export function startTcpProxy(target: { hostname: string; port: number }, opts: { watch?: Watch } = {}): TcpProxy {
  const open = new Set<Socket<Pair>>()
  let port = 0
  let listener: TCPSocketListener<Pair> | undefined
  let answersLost = 0
  let holding = false
  const cut = () => {
    listener?.stop(true)
    listener = undefined
    for (const client of open) {
      client.data.upstream?.terminate()
      client.terminate()
    }
    open.clear()
  }

  const listen = () =>
    Bun.listen<Pair>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          const pair: Pair = { loseAnswer: false, toUpstream: [], toClient: [], client }
          client.data = pair
          open.add(client)
          if (holding) return // what it sends goes nowhere (no backend), and nothing ever comes back
          void Bun.connect<Pair>({
            ...target,
            data: pair,
            socket: {
              open(upstream) {
                pair.upstream = upstream
                send(upstream, pair.toUpstream)
              },
              data(upstream, chunk) {
                if (!pair.loseAnswer) return send(pair.client, pair.toClient, chunk)
                answersLost++
                upstream.terminate()
                pair.client.terminate()
              },
              drain: (upstream) => send(upstream, pair.toUpstream),
              close: () => void pair.client.end(),
              error: () => void pair.client.end(),
            },
          }).catch(() => client.end())
        },
        data(client, chunk) {
          const verdict = opts.watch?.(new TextDecoder().decode(chunk))
          if (verdict === 'cut') return cut()
          if (verdict === 'lose-answer') client.data.loseAnswer = true
          send(client.data.upstream, client.data.toUpstream, chunk)
        },
        drain(client) {
          send(client, client.data.toClient)
        },
        close(client) {
          open.delete(client)
          client.data.upstream?.end()
        },
        error(client) {
          open.delete(client)
          client.data.upstream?.end()
        },
      },
    })

  listener = listen()
  port = listener.port
  return {
    port,
    cut,
    blackHole() {
      cut()
      holding = true
      listener = listen()
    },
    restore() {
      if (holding) cut()
      holding = false
      listener ??= listen()
    },
    stop: cut,
    answersLost: () => answersLost,
  }
}

/** A proxy in front of the host and port of `url`, and the same URL through it (a database's, a bucket's endpoint). */
export function proxyUrl(url: string, opts: { watch?: Watch } = {}): { proxy: TcpProxy; url: string } {
  const through = new URL(url)
  const proxy = startTcpProxy({ hostname: through.hostname, port: Number(through.port) }, opts)
  through.port = String(proxy.port)
  return { proxy, url: through.toString() }
}
