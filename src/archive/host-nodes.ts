/** Static extraction of host node class names: the string keys of NODE_CLASS_MAPPINGS in Python source, in one linear pass. */
import { PythonTokens } from './python-tokens'

const MAPPINGS = 'NODE_CLASS_MAPPINGS'
const MAPPINGS_BYTES = Buffer.from(MAPPINGS)

/**
 * Where the scan stands in a statement about NODE_CLASS_MAPPINGS:
 * `NODE_CLASS_MAPPINGS [: annotation] (= | |= | :=) {`, `NODE_CLASS_MAPPINGS.update({`, `NODE_CLASS_MAPPINGS["Key"] =`.
 */
type Statement = 'none' | 'afterName' | 'annotation' | 'afterDot' | 'afterUpdate' | 'expectDict' | 'itemKey' | 'itemClose' | 'itemAssign'

export interface HostNodeScan {
  /** Distinct names, dict keys first, in the order they appear. */
  names: string[]
  /** Bytes the tokenizer read: linear in the source, whatever the source. */
  visited: number
}

/** Dict keys seen so far, recognised by their bytes: a key repeated a million times is decoded once. */
class DistinctKeys {
  private readonly byHash = new Map<number, Uint8Array[]>()
  readonly names: string[] = []

  addSaved(tokens: PythonTokens): void {
    const hash = tokens.savedHash
    const seen = this.byHash.get(hash)
    // A loop, not seen.some(): no closure per key on the hot path.
    for (const bytes of seen ?? []) if (tokens.savedEquals(bytes)) return
    if (seen) seen.push(tokens.savedBytes)
    else this.byHash.set(hash, [tokens.savedBytes])
    this.names.push(tokens.savedText)
  }
}

/** Scans `source`, stopping once `maxNames` distinct names are found: memory stays bounded whatever the file repeats. */
export function scanHostNodes(source: Uint8Array | string, maxNames = Number.POSITIVE_INFINITY): HostNodeScan {
  const bytes = typeof source === 'string' ? Buffer.from(source) : Buffer.from(source.buffer, source.byteOffset, source.byteLength)
  if (maxNames <= 0 || bytes.indexOf(MAPPINGS_BYTES) < 0) return { names: [], visited: 0 }
  const tokens = new PythonTokens(bytes)
  const dictKeys = new DistinctKeys()
  const itemKeys = new Set<string>()
  let statement: Statement = 'none'
  let itemKey = ''
  let depth = 0
  /** Bracket depths of the dict literals being read, innermost last; a key is a string at exactly that depth. */
  const dicts: number[] = []
  let expectKey = false
  let pendingKey = false

  while (dictKeys.names.length + itemKeys.size < maxNames && tokens.next() !== 'end') {
    const kind = tokens.kind
    if (kind === 'newline') {
      // Inside brackets a newline is only layout; it ends an annotation, as the annotation's own line ends.
      if (statement === 'annotation') statement = 'none'
      continue
    }
    if (pendingKey && tokens.is(':')) dictKeys.addSaved(tokens)
    pendingKey = false

    const inDict = dicts.length > 0 && dicts[dicts.length - 1] === depth
    if (kind === 'string' && inDict && expectKey) {
      tokens.save()
      pendingKey = true
    }
    expectKey = inDict && tokens.is(',')

    if (tokens.is('{') || tokens.is('[') || tokens.is('(')) {
      depth++
      if (statement === 'expectDict' && tokens.is('{')) {
        dicts.push(depth)
        expectKey = true
      }
    } else if ((tokens.is('}') || tokens.is(']') || tokens.is(')')) && depth > 0) {
      if (dicts[dicts.length - 1] === depth) dicts.pop()
      depth--
    }

    if (statement === 'itemAssign' && tokens.is('=')) itemKeys.add(itemKey)
    statement = advance(statement, tokens)
    if (statement === 'itemClose') itemKey = tokens.text
    if (tokens.is(MAPPINGS)) statement = 'afterName'
  }
  const names = new Set([...dictKeys.names, ...itemKeys])
  return { names: [...names], visited: tokens.visited }
}

/** The statement state after a token; any token that does not continue the statement ends it. */
function advance(state: Statement, token: PythonTokens): Statement {
  switch (state) {
    case 'afterName':
      if (token.is('=') || token.is('|=') || token.is(':=')) return 'expectDict'
      if (token.is(':')) return 'annotation'
      if (token.is('.')) return 'afterDot'
      if (token.is('[')) return 'itemKey'
      return 'none'
    case 'annotation':
      return token.is('=') ? 'expectDict' : 'annotation'
    case 'afterDot':
      return token.is('update') ? 'afterUpdate' : 'none'
    case 'afterUpdate':
      return token.is('(') ? 'expectDict' : 'none'
    case 'itemKey':
      return token.kind === 'string' && token.plainString ? 'itemClose' : 'none'
    case 'itemClose':
      return token.is(']') ? 'itemAssign' : 'none'
    default:
      return 'none'
  }
}

export function extractHostNodeNames(source: Uint8Array | string, maxNames?: number): string[] {
  return scanHostNodes(source, maxNames).names
}
