/**
 * The answer to a request that arrives while the server listens but does not serve yet (a fixture loading, the
 * feed follower starting): the registry's error body with Retry-After, as a backend away is answered. It was a
 * bare `starting` text without Retry-After, which an instance restarted under traffic (a crash, a rolling
 * restart behind a load balancer) handed clients that expect `{error, message}`.
 */
export const STARTING_RETRY_AFTER_SECONDS = 1

export function startingResponse(): Response {
  return Response.json(
    { error: 'starting', message: 'the server is starting; try again shortly' },
    { status: 503, headers: { 'Retry-After': String(STARTING_RETRY_AFTER_SECONDS) } },
  )
}
