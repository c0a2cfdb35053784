/** Seconds a connection may send nothing before the server closes it (Bun.serve's idleTimeout), answer or not. */
export const IDLE_TIMEOUT_S = 120
