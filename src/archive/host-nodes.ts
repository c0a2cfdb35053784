/** Static extraction of host node class names: the string keys of NODE_CLASS_MAPPINGS in Python source. */

const STRING_START = /^(?:[rRbBuUfF]{0,2})("""|'''|"|')/

/** Reads a Python string literal at `i`; returns its value and the index after it, or undefined. */
function readString(src: string, i: number): { value: string; end: number } | undefined {
  const m = STRING_START.exec(src.slice(i, i + 5))
  if (!m) return undefined
  const quote = m[1]!
  const raw = /[rR]/.test(m[0].slice(0, -quote.length))
  let j = i + m[0].length
  let value = ''
  while (j < src.length) {
    if (src.startsWith(quote, j)) return { value, end: j + quote.length }
    const ch = src[j]!
    if (ch === '\\' && !raw) {
      value += src[j + 1] ?? ''
      j += 2
      continue
    }
    if (ch === '\n' && quote.length === 1) return undefined
    value += ch
    j++
  }
  return undefined
}

/** The string keys at the top level of the dict literal opening at `open` (a '{'). */
function dictKeys(src: string, open: number): string[] {
  const keys: string[] = []
  let depth = 0
  let expectKey = false
  for (let i = open; i < src.length;) {
    const ch = src[i]!
    if (ch === '#') {
      const nl = src.indexOf('\n', i)
      i = nl < 0 ? src.length : nl
      continue
    }
    if (/\s/.test(ch)) {
      i++
      continue
    }
    const str = readString(src, i)
    if (str) {
      if (depth === 1 && expectKey) {
        let k = str.end
        while (k < src.length && /\s/.test(src[k]!)) k++
        if (src[k] === ':') keys.push(str.value)
      }
      expectKey = false
      i = str.end
      continue
    }
    if ('{[('.includes(ch)) depth++
    else if ('}])'.includes(ch)) {
      depth--
      if (depth === 0) return keys
    }
    expectKey = depth === 1 && (ch === '{' || ch === ',')
    i++
  }
  return keys
}

const DICT_ASSIGN = /\bNODE_CLASS_MAPPINGS\s*(?::[^=\n]*)?(?:=|\|=|\.update\(\s*)\s*(?=\{)/g
const ITEM_ASSIGN = /\bNODE_CLASS_MAPPINGS\s*\[\s*[rR]?("|')((?:(?!\1)[^\\\n])+)\1\s*\]\s*=/g

export function extractHostNodeNames(source: string): string[] {
  if (!source.includes('NODE_CLASS_MAPPINGS')) return []
  const names: string[] = []
  for (const m of source.matchAll(DICT_ASSIGN)) names.push(...dictKeys(source, m.index + m[0].length))
  for (const m of source.matchAll(ITEM_ASSIGN)) names.push(m[2]!)
  return names
}
