/** Status names as clients send them (`NodeVersionStatusActive`, or just `active`, in any case) read as the store's statuses. */
import * as v from 'valibot'
import { NODE_STATUS, VERSION_STATUS } from '../domain/wire'
import { badRequest } from '../errors'
import type { NodeRow, VersionStatus } from '../store/schema'

function reader<K extends string>(names: Record<K, string>, prefix: string) {
  const byName = new Map(Object.entries(names).map(([k, name]) => [(name as string).toLowerCase(), k as K]))
  return (name: string): K | undefined => {
    const lower = name.trim().toLowerCase()
    return byName.get(lower) ?? byName.get(prefix + lower)
  }
}

export const versionStatusOf = reader<VersionStatus>(VERSION_STATUS, 'nodeversionstatus')
export const nodeStatusOf = reader<NodeRow['status']>(NODE_STATUS, 'nodestatus')

/** The `statuses` query parameter: 400 naming a value that is not a NodeVersionStatus. */
export function parseStatuses(names: string[] | undefined): VersionStatus[] | undefined {
  return names?.map((name) => {
    const status = versionStatusOf(name)
    if (!status) throw badRequest(`statuses: "${name}" is not a NodeVersionStatus`)
    return status
  })
}

const names = (o: Record<string, string>) => Object.values(o).join(', ')

/** A NodeVersionStatus in a JSON body. */
export const VersionStatusField = v.pipe(
  v.string('must be a NodeVersionStatus'),
  v.check((s) => versionStatusOf(s) !== undefined, `must be one of ${names(VERSION_STATUS)}`),
  v.transform((s) => versionStatusOf(s)!),
  v.metadata({ openapi: { type: 'string', enum: Object.values(VERSION_STATUS) } }),
)
