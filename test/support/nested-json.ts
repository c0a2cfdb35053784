/** JSON text of an object nested `levels` deep, built as text: JSON.stringify would overflow on the deepest ones. */
export const nestedJson = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"a":1}${'}'.repeat(levels - 1)}`
