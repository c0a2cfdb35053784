/**
 * Who may use the video proxy and its image staging: a user by access token (bearer or X-API-KEY), or, when the
 * operator opened the proxy (--video-public), anyone, told apart by client address. Tasks and staged images
 * belong to the caller's key; the rate limits count per key.
 */
import { unauthorized } from '../errors'
import type { UserRow } from '../store/schema'
import { requireActiveUser, type Actor } from './access'
import type { Deps } from './deps'

export interface VideoCaller {
  /** `user:<id>`, or `addr:<client address>` for an anonymous caller of an open proxy. */
  key: string
  user?: UserRow
}

export function videoCaller(deps: Pick<Deps, 'settings'>, actor: Actor): VideoCaller {
  if (actor.user) {
    const user = requireActiveUser(actor)
    return { key: `user:${user.id}`, user }
  }
  // An open proxy takes a credential it does not know as no credential: the host application sends its
  // comfy.org key whenever it has one, and that key means nothing here.
  if (deps.settings.video.public) return { key: `addr:${actor.address}` }
  throw unauthorized(
    actor.credentialProblem ?? 'Authentication required: send Authorization: Bearer <token> or X-API-KEY: <token> with an access token',
  )
}

/** The caller started this (task or image), or is an admin. */
export const callerMayRead = (caller: VideoCaller, owner: string) => caller.key === owner || caller.user?.is_admin === 1
