/**
 * The answers to requests that arrive while the server listens but does not serve yet (a fixture loading, the
 * feed follower starting): 503 `starting` with Retry-After, as a backend away is answered. They go through the
 * renderer every other error answer takes (http/errors.ts), so that they cannot drift from the registry's error
 * body: the app that renders errors is not built yet, so a small app of its own does, throwing only that error. With
 * the registry's CORS headers (preflights answered too), so that a web page polling a starting server reads the 503.
 */
import { Hono } from 'hono'
import { starting } from '../errors'
import type { Log } from '../log'
import { registryCors } from './cors'
import { renderError } from './errors'

export function createStartingApp(log: Log, corsOrigin?: string): Hono {
  const app = new Hono()
  app.onError(renderError(log))
  app.use(registryCors(corsOrigin))
  app.all('*', () => {
    throw starting()
  })
  return app
}
