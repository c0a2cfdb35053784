/**
 * Two questions about a database failure, one list of what "the connection was lost" looks like: isConnectionLost
 * (the transaction went with it: a failed ROLLBACK is then nothing to report) and isDatabaseUnavailable (try again
 * once the database is back: 503, not 500). Every lost connection is unavailability; a timeout, a refused or full
 * server is unavailability whose connection may live on, in its transaction.
 */
import { expect, test } from 'bun:test'
import { isDatabaseUnavailable } from '../../src/store/db'
import { isConnectionLost } from '../../src/store/postgres'

const failure = (fields: { code?: string; errno?: unknown }) => Object.assign(new Error('failed'), fields)

const lost = [
  { code: 'ERR_POSTGRES_CONNECTION_CLOSED' },
  { code: 'ERR_POSTGRES_CONNECTION_TIMEOUT' },
  { code: 'ERR_POSTGRES_SOCKET_CLOSED' },
  { code: 'ECONNRESET' },
  { code: 'EPIPE' },
  { errno: '08006' },
  { errno: '57P01' },
]
const unavailableOnly = [
  { code: 'ERR_POSTGRES_QUERY_TIMEOUT' },
  { code: 'ERR_POSTGRES_IDLE_TIMEOUT' },
  { code: 'ECONNREFUSED' },
  { code: 'EHOSTUNREACH' },
  { code: 'ETIMEDOUT' },
  { errno: '53300' },
]
const neither = [{ errno: '23505' }, { errno: '40001' }, { code: 'ERR_POSTGRES_SYNTAX_ERROR' }, { errno: 53300 }, {}]

test('a lost connection is both lost and unavailable', () => {
  for (const f of lost)
    expect({ ...f, lost: isConnectionLost(failure(f)), unavailable: isDatabaseUnavailable(failure(f)) }).toEqual({
      ...f,
      lost: true,
      unavailable: true,
    })
})

test('a connection not made, timed out or refused for load is unavailable, not lost', () => {
  for (const f of unavailableOnly)
    expect({ ...f, lost: isConnectionLost(failure(f)), unavailable: isDatabaseUnavailable(failure(f)) }).toEqual({
      ...f,
      lost: false,
      unavailable: true,
    })
})

test("the server's refusals (a constraint, a serialization failure, bad SQL) are neither", () => {
  for (const f of neither)
    expect({ ...f, lost: isConnectionLost(failure(f)), unavailable: isDatabaseUnavailable(failure(f)) }).toEqual({
      ...f,
      lost: false,
      unavailable: false,
    })
  expect(isDatabaseUnavailable({ code: 'ECONNRESET' })).toBe(false) // not an Error: not a failure of ours
})
