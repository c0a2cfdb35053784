/** Static extraction of host node class names: the string keys of NODE_CLASS_MAPPINGS in Python source, in one linear pass. */
import { PythonTokens } from './python-tokens'

const MAPPINGS = 'NODE_CLASS_MAPPINGS'

/**
 * Where the scan stands in a statement about NODE_CLASS_MAPPINGS:
 * `NODE_CLASS_MAPPINGS [: annotation] (= | |= | :=) {`, `NODE_CLASS_MAPPINGS.update({`, `NODE_CLASS_MAPPINGS["Key"] =`.
 */
type Statement = 'none' | 'afterName' | 'annotation' | 'afterDot' | 'afterUpdate' | 'expectDict' | 'itemKey' | 'itemClose' | 'itemAssign'

export interface HostNodeScan {
  names: string[]
  /** Characters the tokenizer read: linear in the source, whatever the source. */
  visited: number
}

export function scanHostNodes(source: string): HostNodeScan {
  if (!source.includes(MAPPINGS)) return { names: [], visited: 0 }
  const tokens = new PythonTokens(source)
  const dictKeys: string[] = []
  const itemKeys: string[] = []
  let statement: Statement = 'none'
  let itemKey = ''
  let depth = 0
  /** Bracket depths of the dict literals being read, innermost last; a key is a string at exactly that depth. */
  const dicts: number[] = []
  let expectKey = false
  let pendingKey: string | undefined

  while (tokens.next() !== 'end') {
    const { kind, text } = tokens
    if (kind === 'newline') {
      // Inside brackets a newline is only layout; it ends an annotation, as the annotation's own line ends.
      if (statement === 'annotation') statement = 'none'
      continue
    }
    const isOp = (t: string) => kind === 'op' && text === t
    if (pendingKey !== undefined && isOp(':')) dictKeys.push(pendingKey)
    pendingKey = undefined

    const inDict = dicts.length > 0 && dicts[dicts.length - 1] === depth
    if (kind === 'string' && inDict && expectKey) pendingKey = text
    expectKey = inDict && isOp(',')

    if (kind === 'op' && (text === '{' || text === '[' || text === '(')) {
      depth++
      if (text === '{' && statement === 'expectDict') {
        dicts.push(depth)
        expectKey = true
      }
    } else if (kind === 'op' && (text === '}' || text === ']' || text === ')') && depth > 0) {
      if (dicts[dicts.length - 1] === depth) dicts.pop()
      depth--
    }

    if (statement === 'itemAssign' && isOp('=')) itemKeys.push(itemKey)
    statement = advance(statement, kind, text, tokens.plainString)
    if (statement === 'itemClose') itemKey = text
    if (kind === 'name' && text === MAPPINGS) statement = 'afterName'
  }
  return { names: [...dictKeys, ...itemKeys], visited: tokens.visited }
}

/** The statement state after a token; any token that does not continue the statement ends it. */
function advance(state: Statement, kind: string, text: string, plainString: boolean): Statement {
  const op = kind === 'op' ? text : undefined
  switch (state) {
    case 'afterName':
      if (op === '=' || op === '|=' || op === ':=') return 'expectDict'
      if (op === ':') return 'annotation'
      if (op === '.') return 'afterDot'
      if (op === '[') return 'itemKey'
      return 'none'
    case 'annotation':
      return op === '=' ? 'expectDict' : 'annotation'
    case 'afterDot':
      return kind === 'name' && text === 'update' ? 'afterUpdate' : 'none'
    case 'afterUpdate':
      return op === '(' ? 'expectDict' : 'none'
    case 'itemKey':
      return kind === 'string' && plainString ? 'itemClose' : 'none'
    case 'itemClose':
      return op === ']' ? 'itemAssign' : 'none'
    default:
      return 'none'
  }
}

export function extractHostNodeNames(source: string): string[] {
  return scanHostNodes(source).names
}
