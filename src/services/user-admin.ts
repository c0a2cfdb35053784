/** What operators do to user accounts from the command line: make or unmake admins, ban and unban, each recorded in the audit log. */
import { notFound } from '../errors'
import { findUser, updateUser } from '../store/users'
import type { UserRow } from '../store/schema'
import type { Actor } from './access'
import { commitWrite, type WriteDeps } from './changes'

export type UserChange = 'promote' | 'demote' | 'ban' | 'unban'

const CHANGES: Record<UserChange, Partial<Pick<UserRow, 'is_admin' | 'status'>>> = {
  promote: { is_admin: 1 },
  demote: { is_admin: 0 },
  ban: { status: 'banned' },
  unban: { status: 'active' },
}

const describe = (u: Pick<UserRow, 'is_admin' | 'status'>) => ({ admin: u.is_admin === 1, status: u.status })

/** Applies the change (a no-op when the account is already so) and returns the account as it now is. */
export async function changeUser(deps: WriteDeps, actor: Actor, id: string, change: UserChange): Promise<UserRow> {
  return commitWrite(deps, async (w) => {
    const before = await findUser(w.db, id)
    if (!before) throw notFound(`user "${id}" not found`)
    const after = { ...before, ...CHANGES[change] }
    if (after.is_admin === before.is_admin && after.status === before.status) return before
    await updateUser(w.db, id, CHANGES[change], w.now)
    w.audit(actor, { action: `user.${change}`, targetKind: 'user', targetId: id, before: describe(before), after: describe(after) })
    return (await findUser(w.db, id))!
  })
}
