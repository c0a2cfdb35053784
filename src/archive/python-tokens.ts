/** One forward pass over the bytes of a Python file, yielding the tokens host-node extraction reads: names, strings, operators, newlines. */

export type TokenKind = 'name' | 'string' | 'op' | 'newline' | 'end'

const QUOTE_DOUBLE = 34
const QUOTE_SINGLE = 39
const BACKSLASH = 92
const NEWLINE = 10
const HASH = 35
const EQUALS = 61
const R_LOWER = 114
const R_UPPER = 82
/** Characters that form a two-character operator with a following '=' (`==`, `|=`, `:=`, `+=`...). */
const BEFORE_EQUALS = new Set('=!<>+-*/%&|^@:'.split('').map((c) => c.charCodeAt(0)))
const PREFIX_LETTERS = new Set('rRbBuUfF'.split('').map((c) => c.charCodeAt(0)))

/** Bytes of UTF-8 text: every byte of a multi-byte character is >= 0x80, so it reads as part of a name. */
const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127
const isBlank = (c: number) => c === 32 || c === 9 || c === 13 || c === 12 || c === 11

const utf8 = new TextDecoder()

/**
 * A cursor over the tokens of UTF-8 source. The position only moves forward and each byte is read once plus a
 * bounded look-ahead, so a scan is linear in the source; `visited` counts byte reads so tests can check it.
 * Syntax is all ASCII, so the bytes are tokenized as they are: nothing is decoded but the strings a caller
 * asks for, and a file of a million tokens leaves no garbage behind.
 */
export class PythonTokens {
  kind: TokenKind = 'end'
  /** A one-line string without escapes and with at most an `r` prefix: what a subscript key is written as. */
  plainString = false
  visited = 0
  /** The token's span; for a string, the span of its value between the quotes. */
  start = 0
  end = 0
  private pos = 0
  private escaped = false
  private raw = false
  private readonly saved = { start: 0, end: 0, escaped: false, raw: false }

  constructor(readonly src: Uint8Array) {}

  private at(i: number): number {
    this.visited++
    return i < this.src.length ? this.src[i]! : -1
  }

  /** Whether the token is exactly `text` (an ASCII operator or name), compared in place. */
  is(text: string): boolean {
    if (this.end - this.start !== text.length || (this.kind !== 'op' && this.kind !== 'name')) return false
    for (let i = 0; i < text.length; i++) if (this.src[this.start + i] !== text.charCodeAt(i)) return false
    return true
  }

  /** The name or operator, or the string's value with escapes resolved the simple way (`\x` reads as `x`). */
  get text(): string {
    return this.decode(this.start, this.end, this.kind === 'string' && this.escaped, this.raw)
  }

  /** Keeps the current string token so that it can be read after the cursor moves on (a dict key before its ':'). */
  save(): void {
    this.saved.start = this.start
    this.saved.end = this.end
    this.saved.escaped = this.escaped
    this.saved.raw = this.raw
  }

  get savedText(): string {
    const { start, end, escaped, raw } = this.saved
    return this.decode(start, end, escaped, raw)
  }

  /** FNV-1a over the saved token's bytes, for recognising a repeated key without decoding it. */
  get savedHash(): number {
    let hash = 0x811c9dc5
    for (let i = this.saved.start; i < this.saved.end; i++) hash = Math.imul(hash ^ this.at(i), 0x01000193)
    return hash >>> 0
  }

  get savedBytes(): Uint8Array {
    return this.src.slice(this.saved.start, this.saved.end)
  }

  savedEquals(bytes: Uint8Array): boolean {
    const { start, end } = this.saved
    if (end - start !== bytes.length) return false
    for (let i = 0; i < bytes.length; i++) if (this.at(start + i) !== bytes[i]) return false
    return true
  }

  private decode(start: number, end: number, escaped: boolean, raw: boolean): string {
    if (!escaped) return utf8.decode(this.src.subarray(start, end))
    const value = new Uint8Array(end - start)
    let length = 0
    for (let j = start; j < end; j++) {
      const c = this.at(j)
      if (c !== BACKSLASH) {
        value[length++] = c
        continue
      }
      if (raw) value[length++] = c
      if (j + 1 < end) value[length++] = this.at(++j)
    }
    return utf8.decode(value.subarray(0, length))
  }

  next(): TokenKind {
    for (;;) {
      const c = this.at(this.pos)
      if (c === -1) return this.token('end', this.pos, this.pos)
      if (isBlank(c)) this.pos++
      else if (c === BACKSLASH && this.at(this.pos + 1) === NEWLINE) this.pos += 2
      else if (c === HASH) this.skipComment()
      else break
    }
    const start = this.pos
    const c = this.at(start)
    if (c === NEWLINE) {
      this.pos++
      return this.token('newline', start, start + 1)
    }
    if (c === QUOTE_DOUBLE || c === QUOTE_SINGLE) return this.readString(start, start)
    if (isWordChar(c)) {
      let end = start + 1
      while (isWordChar(this.at(end))) end++
      this.pos = end
      const after = this.at(end)
      const prefixed = (after === QUOTE_DOUBLE || after === QUOTE_SINGLE) && this.isStringPrefix(start, end)
      return prefixed ? this.readString(start, end) : this.token('name', start, end)
    }
    const width = BEFORE_EQUALS.has(c) && this.at(start + 1) === EQUALS ? 2 : 1
    this.pos = start + width
    return this.token('op', start, start + width)
  }

  private isStringPrefix(start: number, end: number): boolean {
    if (end - start > 2) return false
    for (let i = start; i < end; i++) if (!PREFIX_LETTERS.has(this.src[i]!)) return false
    return true
  }

  private token(kind: TokenKind, start: number, end: number): TokenKind {
    this.kind = kind
    this.start = start
    this.end = end
    this.plainString = false
    return kind
  }

  private skipComment(): void {
    while (this.pos < this.src.length && this.at(this.pos) !== NEWLINE) this.pos++
  }

  /**
   * Reads the string whose prefix spans [prefixStart, pos) and whose opening quote is at `pos`. An unterminated
   * one-line string ends at the newline.
   */
  private readString(prefixStart: number, quoteAt: number): TokenKind {
    const quote = this.at(quoteAt)
    const triple = this.at(quoteAt + 1) === quote && this.at(quoteAt + 2) === quote
    const start = quoteAt + (triple ? 3 : 1)
    let j = start
    let escaped = false
    let terminated = false
    for (;;) {
      const c = this.at(j)
      if (c === -1) break
      if (c === BACKSLASH) {
        escaped = true
        j += 2
        continue
      }
      if (c === NEWLINE && !triple) break
      if (c === quote && (!triple || (this.at(j + 1) === quote && this.at(j + 2) === quote))) {
        terminated = true
        break
      }
      j++
    }
    const end = Math.min(j, this.src.length)
    this.pos = terminated ? j + (triple ? 3 : 1) : end
    this.token('string', start, end)
    let raw = false
    for (let i = prefixStart; i < quoteAt; i++) raw ||= this.src[i] === R_LOWER || this.src[i] === R_UPPER
    this.escaped = escaped
    this.raw = raw
    // A plain key: no escapes, one line, no prefix other than r or R.
    const prefixLength = quoteAt - prefixStart
    this.plainString = terminated && !triple && !escaped && end > start && (prefixLength === 0 || (prefixLength === 1 && raw))
    return 'string'
  }
}
