/**
 * A TCP proxy in front of a test database that passes bytes both ways until a client sends something matching
 * `pattern` (a query naming a table, say), then drops that connection and refuses every later one: the database
 * going away at a chosen point of a command.
 */
import { type Socket } from 'bun'

interface Pair {
  client: Socket<Pair>
  upstream?: Socket<Pair>
  waiting: Uint8Array[]
}

/** Passes bytes both ways until a client sends `pattern`; then drops that connection and refuses the rest. */
export function startCuttingProxy(target: { hostname: string; port: number }, pattern: RegExp) {
  let cut = false
  const listener = Bun.listen<Pair>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        if (cut) return void client.end()
        const pair: Pair = { client, waiting: [] }
        client.data = pair
        void Bun.connect<Pair>({
          ...target,
          data: pair,
          socket: {
            open(upstream) {
              pair.upstream = upstream
              for (const chunk of pair.waiting.splice(0)) upstream.write(chunk)
            },
            data(_upstream, chunk) {
              pair.client.write(chunk)
            },
            close() {
              pair.client.end()
            },
          },
        })
      },
      data(client, chunk) {
        if (cut || pattern.test(new TextDecoder().decode(chunk))) {
          cut = true
          client.data.upstream?.end()
          return void client.end()
        }
        if (client.data.upstream) client.data.upstream.write(chunk)
        else client.data.waiting.push(new Uint8Array(chunk))
      },
      close(client) {
        client.data?.upstream?.end()
      },
    },
  })
  return { port: listener.port, stop: () => listener.stop(true) }
}
