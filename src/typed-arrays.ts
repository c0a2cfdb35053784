/** A typed array of `size` elements beginning with `old`'s (how the index's per-slot arrays grow). */
export function grown<T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(old: T, size: number): T {
  const next = new (old.constructor as new (length: number) => T)(size)
  next.set(old as never)
  return next
}
