/**
 * The benchmarks' seeded random numbers: mulberry32 (32-bit state, period 2^32, integer arithmetic only).
 * The LCG used before multiplied past 2^53 in floating point, lost its low bits and cycled after 10,466 values.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const picker =
  (random: () => number) =>
  <T>(xs: readonly T[]): T =>
    xs[Math.floor(random() * xs.length)]!
