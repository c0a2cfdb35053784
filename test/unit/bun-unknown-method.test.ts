/**
 * Why `curl -X FOO` gets an empty reply: Bun.serve closes the connection for a method it does not know before any
 * handler (fetch or error) runs, so no code of ours can answer it. Methods Bun knows but no route takes (PROPFIND,
 * PURGE) reach the app and get its 404 `not_found` body. If this test fails after a Bun upgrade, Bun hands such
 * requests over now: answer them from the app (405 with Allow, or 501, in the contract's error body).
 */
import { expect, test } from 'bun:test'
import { connect } from 'node:net'
import { makeTestApp } from '../support/app'

function rawReply(port: number, method: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`${method} / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`))
    let reply = ''
    socket.on('data', (chunk) => (reply += chunk))
    socket.on('close', () => resolve(reply))
  })
}

test('Bun.serve drops a request with an unknown method before fetch or error runs; a known one reaches fetch', async () => {
  const reached: string[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) => (reached.push(req.method), new Response('', { status: 501 })),
    error: () => (reached.push('error'), new Response('', { status: 500 })),
  })
  try {
    expect(await rawReply(server.port!, 'FOO')).toBe('')
    expect(await rawReply(server.port!, 'PROPFIND')).toStartWith('HTTP/1.1 501')
    expect(reached).toEqual(['PROPFIND'])
  } finally {
    server.stop(true)
  }
})

test('a method Bun knows but no route takes gets the contract error body from the app', async () => {
  const t = await makeTestApp()
  try {
    const res = await t.app.request('/health', { method: 'PROPFIND' })
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ error: 'not_found', message: 'No route for PROPFIND /health' })
  } finally {
    await t.cleanup()
  }
})
