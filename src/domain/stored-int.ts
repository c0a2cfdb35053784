/**
 * The range of the store's integer columns on every backend: a 32-bit INTEGER on PostgreSQL (SQLite would keep more).
 * Counts taken from elsewhere are bounded to it before they are written, so that no value fails a write on one backend
 * and not on the other.
 */
export const MAX_STORED_INT = 2_147_483_647
export const MIN_STORED_INT = -2_147_483_648
