/**
 * A TCP proxy in front of a test database that loses the server's answer to one chosen message: the statement (a
 * COMMIT, an INSERT outside a transaction) is applied, and the client sees its connection drop, as when the server
 * stops or the network goes right after committing.
 */
import type { Socket, TCPSocketListener } from 'bun'

interface Pair {
  client: Socket<Pair>
  upstream?: Socket<Pair>
  toUpstream: Uint8Array[]
  /** The armed message went through: whatever the server answers is dropped, and the connection with it. */
  swallow: boolean
}

/**
 * Passes bytes both ways; once `armed`, the first message matching `pattern` (by default a COMMIT) reaches the
 * server and its answer never reaches the client: the connection drops instead.
 */
export function startAnswerEater(target: { hostname: string; port: number }, pattern = /commit/i) {
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
        if (state.armed && pattern.test(new TextDecoder().decode(chunk))) {
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
