/**
 * Addresses (`scheme://…`) in a text, found in one pass: the text may come from an upstream (an error it sent, a
 * provider's refusal), so no regular expression that backtracks; one pass over it whatever its bytes (a regular
 * expression for the same took 0.2-0.5 s for 32 KB of `a-a-a-` or of dots after a `?`).
 */

/** Where an address lies in its text. */
export interface AddressSpan {
  start: number
  /** Where `://` ends. */
  authority: number
  /** Where its query or fragment begins (`end` when it has neither). */
  query: number
  /** Where the punctuation after it begins (`.`, `,`, `:`, `;`, `!`, `)`, `]`: closing a sentence, not the address). */
  trimmed: number
  /** Where it ends: at white space, a quote, `<`, `>` or the end of the text. */
  end: number
}

const isLetter = (c: number) => (c >= 97 && c <= 122) || (c >= 65 && c <= 90)
const isSchemeChar = (c: number) => isLetter(c) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46 // + - .
/** White space, quotes, < and >: what no address holds as written in a message. */
const endsAddress = (c: number) =>
  c <= 32 || c === 34 || c === 39 || c === 60 || c === 62 || c === 0x85 || c === 0xa0 || c === 0x2028 || c === 0x2029
const isTrailing = (c: number) => c === 46 || c === 44 || c === 58 || c === 59 || c === 33 || c === 41 || c === 93
const QUERY = 63 // ?
const FRAGMENT = 35 // #

/** The text with each address replaced by what `render` makes of it (given the text and the address's span). */
export function mapAddresses(text: string, render: (span: AddressSpan) => string): string {
  let out = ''
  let copied = 0
  for (let at = text.indexOf('://'); at !== -1; at = text.indexOf('://', at + 3)) {
    // The scheme: the letters, digits, `+`, `-` and `.` before `://` (back no further than the last address), from a letter.
    let start = at
    while (start > copied && isSchemeChar(text.charCodeAt(start - 1))) start--
    while (start < at && !isLetter(text.charCodeAt(start))) start++
    if (start === at) continue
    const authority = at + 3
    let end = authority
    while (end < text.length) {
      const c = text.charCodeAt(end)
      if (endsAddress(c) || c === QUERY || c === FRAGMENT) break
      end++
    }
    const query = end
    while (end < text.length && !endsAddress(text.charCodeAt(end))) end++
    let trimmed = end
    while (trimmed > authority && isTrailing(text.charCodeAt(trimmed - 1))) trimmed--
    out += text.slice(copied, start) + render({ start, authority, query, trimmed, end })
    copied = end
    at = end - 3
  }
  return copied ? out + text.slice(copied) : text
}
