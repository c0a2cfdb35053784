/**
 * No upstream sends this server to a reserved address (a cloud metadata service, link-local, multicast, unspecified):
 * not an archive's URL, not a redirect, not a name resolving there. Nothing but 127.0.0.1 is contacted: the client's
 * fetch is a guard that fails the test for any other host, and names resolve through a table.
 */
import { afterEach, expect, test } from 'bun:test'
import { isReservedAddress, refusedDestination, type Resolve } from '../../src/upstream/destinations'
import { createUpstreamHttp, UpstreamError } from '../../src/upstream/http-client'

const NAMES: Record<string, string[]> = {
  'metadata.google.internal': ['169.254.169.254'],
  'mixed.test': ['93.184.216.34', 'fe80::1'],
  'storage.test': ['93.184.216.34', '2606:2800:220:1::1'],
}
const resolve: Resolve = async (host) => {
  const found = NAMES[host]
  if (!found) throw new Error(`getaddrinfo ENOTFOUND ${host}`)
  return found
}

test.each([
  ['169.254.169.254', true],
  ['169.254.170.2', true],
  ['100.100.100.200', true],
  ['0.0.0.0', true],
  ['224.0.0.1', true],
  ['255.255.255.255', true],
  ['fe80::1', true],
  ['fd00:ec2::254', true],
  ['::', true],
  ['ff02::1', true],
  ['::ffff:169.254.169.254', true],
  ['127.0.0.1', false],
  ['::1', false],
  ['10.1.2.3', false],
  ['172.16.0.1', false],
  ['192.168.1.1', false],
  ['100.64.0.1', false],
  ['fd12:3456::1', false],
  ['93.184.216.34', false],
  ['not an address', false],
])('%s reserved: %p', (address, reserved) => {
  expect(isReservedAddress(address)).toBe(reserved)
})

test.each([
  ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a reserved address'],
  ['http://2852039166/latest/', '169.254.169.254 is a reserved address'],
  ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a reserved address'],
  ['http://[fe80::1]:8080/x.zip', 'fe80::1 is a reserved address'],
  ['http://0.0.0.0:8080/', '0.0.0.0 is a reserved address'],
  ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal (169.254.169.254) is a reserved address'],
  ['https://mixed.test/x.zip', 'mixed.test (fe80::1) is a reserved address'],
])('%s is refused', async (url, why) => {
  expect(await refusedDestination(url, resolve)).toStartWith(why)
})

test.each([
  'http://127.0.0.1:8080/archives/x.zip',
  'http://0x7f.1/x.zip',
  'http://[::1]/x.zip',
  'http://10.0.0.5/x.zip',
  'https://storage.test/bucket/x.zip',
  'https://unknown.test/x.zip', // left to the request to fail as it would
])('%s may be asked', async (url) => {
  expect(await refusedDestination(url, resolve)).toBeUndefined()
})

let server: ReturnType<typeof Bun.serve> | undefined
afterEach(() => server?.stop(true))

/** The client with a fetch that only ever reaches 127.0.0.1, and the URLs it was asked to fetch. */
function guardedClient() {
  const asked: string[] = []
  const slept: number[] = []
  const http = createUpstreamHttp({
    timeoutMs: 2_000,
    attempts: 3,
    resolve,
    sleep: async (ms) => void slept.push(ms),
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input)
      asked.push(url)
      if (new URL(url).hostname !== '127.0.0.1') throw new Error(`the test would have contacted ${url}`)
      return fetch(input, init)
    }) as typeof fetch,
  })
  return { http, asked, slept }
}

const read = (body: ReadableStream<Uint8Array>) => new Response(body).text()

test('an archive URL on a reserved address is refused at once: never fetched, not tried again', async () => {
  const { http, asked, slept } = guardedClient()
  const failed = await http.download('http://169.254.169.254/latest/meta-data/iam/', read).catch((err) => err)
  expect(failed).toBeInstanceOf(UpstreamError)
  expect(failed.kind).toBe('invalid')
  expect(failed.message).toBe(
    'http://169.254.169.254/latest/meta-data/iam/: 169.254.169.254 is a reserved address ' +
      '(link-local, a metadata service, multicast or unspecified): not asked',
  )
  expect(asked).toEqual([])
  expect(slept).toEqual([])
})

test("a redirect to a name of a metadata service is refused after the upstream's answer, once", async () => {
  let hits = 0
  server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      hits++
      return new Response(null, { status: 302, headers: { location: 'http://metadata.google.internal/computeMetadata/v1/' } })
    },
  })
  const { http, asked } = guardedClient()
  const url = `http://127.0.0.1:${server.port}/archives/acme/pack/1.0.0/node.zip`
  const failed = await http.download(url, read).catch((err) => err)
  expect(failed).toBeInstanceOf(UpstreamError)
  expect(failed.kind).toBe('invalid')
  expect(failed.message).toContain('metadata.google.internal (169.254.169.254) is a reserved address')
  expect(asked).toEqual([url])
  expect(hits).toBe(1)
})

test('JSON replies are held to the same rule (an upstream configured on a reserved address is not asked)', async () => {
  const { http, asked } = guardedClient()
  const { object } = await import('valibot')
  const failed = await http.json('http://[fd00:ec2::254]/changes?since=0', object({})).catch((err) => err)
  expect(failed).toBeInstanceOf(UpstreamError)
  expect(failed.message).toContain('fd00:ec2::254 is a reserved address')
  expect(asked).toEqual([])
})
