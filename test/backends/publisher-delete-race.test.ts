/**
 * A publisher deleted or banned on one instance while another puts a node into it (PostgreSQL): a publish of a new
 * node, a node created without a version, a claim, an admin's transfer. Each side holds the publisher's row before
 * it decides (the delete before it counts the live nodes, the ban before it bans them; the others before they write
 * the node, and then read the publisher again), so whichever comes second sees what the first committed. Unheld, the
 * node written meanwhile was left live under a deleted publisher (or active under a banned one): the delete counted
 * the nodes before the node's write committed, and the node's write found the publisher as it was before the delete.
 */
import { afterEach, test } from 'bun:test'
import { describeOnBackends, TEST_DATABASE } from '../support/backends'
import { publisherRaceTests } from '../support/publisher-race'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean()
})

describeOnBackends('a publisher deleted or banned while a node is put into it on another instance', () => {
  publisherRaceTests('postgres', cleanups, TEST_DATABASE !== undefined)
})
