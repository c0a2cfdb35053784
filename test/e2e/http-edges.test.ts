/**
 * Requests as they reach the compiled server from clients that send no usable Host header: HTTP/1.0 without one
 * (HAProxy's default health check, a hand-written `printf | nc`), or a Host Bun cannot put in a URL. Bun hands such a
 * request over with a URL of its path alone; it must still be routed by its path.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureBinary, startServer, type Server } from '../support/binary'

const data = mkdtempSync(join(tmpdir(), 'registry-mirror-e2e-edges-'))
let server: Server

beforeAll(async () => {
  await ensureBinary()
  server = await startServer(data)
})
afterAll(async () => {
  await server?.stop()
  rmSync(data, { recursive: true, force: true })
})

/**
 * The status line and body of one request written to the socket as given (the server closes after it). Written,
 * not ended: a client that half-closes its side is taken as gone, and an answer that waits on the store (PostgreSQL)
 * was then never written.
 */
function raw(head: string): Promise<{ status: string; body: string }> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head))
    let text = ''
    socket.on('data', (chunk) => (text += chunk.toString('latin1')))
    socket.on('error', reject)
    socket.on('close', () => {
      const [headers = '', body = ''] = text.split('\r\n\r\n')
      resolve({ status: headers.split('\r\n')[0] ?? '', body })
    })
  })
}

test('HTTP/1.0 without a Host header is routed by its path', async () => {
  const health = await raw('GET /health HTTP/1.0\r\n\r\n')
  expect(health.status).toBe('HTTP/1.1 200 OK')
  expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
  const list = await raw('GET /nodes HTTP/1.0\r\n\r\n')
  expect(list.status).toBe('HTTP/1.1 200 OK')
  expect(JSON.parse(list.body)).toMatchObject({ nodes: [], total: 0 })
})

test('a path is never routed as a shorter one (the part after its first segment)', async () => {
  // Read from the wrong place, /nodes/admin/audit was the admin route /admin/audit (a 401 for want of a token).
  const res = await raw('GET /nodes/admin/audit HTTP/1.0\r\n\r\n')
  expect(res.status).toBe('HTTP/1.1 404 Not Found')
  expect(JSON.parse(res.body).message).toBe('No route for GET /nodes/admin/audit')
})

test('a Host header that is no host is routed by its path too', async () => {
  for (const host of ['a b', 'a/b', '']) {
    const res = await raw(`GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
    expect(res.status).toBe('HTTP/1.1 200 OK')
  }
})
