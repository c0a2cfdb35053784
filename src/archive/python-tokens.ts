/** One forward pass over Python source, yielding the tokens host-node extraction reads: names, strings, operators, newlines. */

export type TokenKind = 'name' | 'string' | 'op' | 'newline' | 'end'

const QUOTE_DOUBLE = 34
const QUOTE_SINGLE = 39
const BACKSLASH = 92
const NEWLINE = 10
const HASH = 35
/** Characters that form a two-character operator with a following '=' (`==`, `|=`, `:=`, `+=`...). */
const BEFORE_EQUALS = new Set('=!<>+-*/%&|^@:'.split('').map((c) => c.charCodeAt(0)))
const STRING_PREFIX = /^[rRbBuUfF]{1,2}$/

const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127
const isBlank = (c: number) => c === 32 || c === 9 || c === 13 || c === 12 || c === 11

/**
 * A mutable cursor over the tokens of `src` (no token objects are allocated). The position only moves forward
 * and each character is read once plus a bounded look-ahead, so a scan is linear in the source: `visited`
 * counts character reads so that tests can check it.
 */
export class PythonTokens {
  kind: TokenKind = 'end'
  /** The name, the operator, or the string's value (escapes resolved the simple way: `\x` reads as `x`). */
  text = ''
  /** A one-line string without escapes and with at most an `r` prefix: what a subscript key is written as. */
  plainString = false
  visited = 0
  private pos = 0

  constructor(private readonly src: string) {}

  private at(i: number): number {
    this.visited++
    return i < this.src.length ? this.src.charCodeAt(i) : -1
  }

  next(): TokenKind {
    for (;;) {
      const c = this.at(this.pos)
      if (c === -1) return this.emit('end', '')
      if (isBlank(c)) this.pos++
      else if (c === BACKSLASH && this.at(this.pos + 1) === NEWLINE) this.pos += 2
      else if (c === HASH) this.skipComment()
      else break
    }
    const start = this.pos
    const c = this.at(start)
    if (c === NEWLINE) {
      this.pos++
      return this.emit('newline', '\n')
    }
    if (c === QUOTE_DOUBLE || c === QUOTE_SINGLE) return this.readString('')
    if (isWordChar(c)) {
      let end = start + 1
      while (isWordChar(this.at(end))) end++
      const word = this.src.slice(start, end)
      this.pos = end
      const after = this.at(end)
      if ((after === QUOTE_DOUBLE || after === QUOTE_SINGLE) && STRING_PREFIX.test(word)) return this.readString(word)
      return this.emit('name', word)
    }
    const width = BEFORE_EQUALS.has(c) && this.at(start + 1) === 61 ? 2 : 1
    this.pos = start + width
    return this.emit('op', this.src.slice(start, start + width))
  }

  private emit(kind: TokenKind, text: string): TokenKind {
    this.kind = kind
    this.text = text
    this.plainString = false
    return kind
  }

  private skipComment(): void {
    while (this.at(this.pos) !== NEWLINE && this.pos < this.src.length) this.pos++
  }

  /** Reads the string whose opening quote is at `pos`. An unterminated one-line string ends at the newline. */
  private readString(prefix: string): TokenKind {
    const quote = this.at(this.pos)
    const triple = this.at(this.pos + 1) === quote && this.at(this.pos + 2) === quote
    const raw = /[rR]/.test(prefix)
    let j = this.pos + (triple ? 3 : 1)
    let value = ''
    let segment = j
    let escaped = false
    let terminated = false
    for (;;) {
      const c = this.at(j)
      if (c === -1) break
      if (c === BACKSLASH) {
        escaped = true
        value += this.src.slice(segment, j) + (raw ? this.src.slice(j, j + 2) : this.src.slice(j + 1, j + 2))
        j += 2
        segment = j
        continue
      }
      if (c === NEWLINE && !triple) break
      if (c === quote && (!triple || (this.at(j + 1) === quote && this.at(j + 2) === quote))) {
        terminated = true
        break
      }
      j++
    }
    value += this.src.slice(segment, Math.min(j, this.src.length))
    this.pos = terminated ? j + (triple ? 3 : 1) : Math.min(j, this.src.length)
    this.emit('string', value)
    this.plainString = terminated && !triple && !escaped && value !== '' && (prefix === '' || prefix === 'r' || prefix === 'R')
    return 'string'
  }
}
