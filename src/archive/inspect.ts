/** Checks an uploaded archive (zip or tar.gz) and extracts the host node names it provides. */
import { checkArchive } from './check'

export type { ArchiveFormat, Inspection } from './check'

export const inspectArchive = checkArchive
