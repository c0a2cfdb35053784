import { describe, expect, test } from 'bun:test'
import { extractHostNodeNames, scanHostNodes } from '../../src/archive/host-nodes'

describe('extractHostNodeNames', () => {
  test('reads the string keys of a NODE_CLASS_MAPPINGS dict literal', () => {
    const src = `
NODE_CLASS_MAPPINGS = {
    "KSampler (Advanced)": KSamplerAdvanced,
    'LoadImage': LoadImage,  # trailing comment with "Fake": x
    # "Commented": Out,
    """Triple""": T,
    "Nested": make({"NotAKey": 1}),
    **OTHER_MAPPINGS,
}
`
    expect(extractHostNodeNames(src)).toEqual(['KSampler (Advanced)', 'LoadImage', 'Triple', 'Nested'])
  })

  test('reads item assignments, update() calls, |= and annotated assignments', () => {
    const src = `
NODE_CLASS_MAPPINGS: dict[str, type] = {"Annotated": A}
NODE_CLASS_MAPPINGS["Item"] = Item
NODE_CLASS_MAPPINGS.update({"Updated": U, "With \\"escape\\"": E})
NODE_CLASS_MAPPINGS |= {"Merged": M}
NODE_CLASS_MAPPINGS[r'Raw'] = R
`
    expect(extractHostNodeNames(src)).toEqual(['Annotated', 'Updated', 'With "escape"', 'Merged', 'Item', 'Raw'])
  })

  test('keys across lines, with comments between them, in dicts nested in other statements', () => {
    const src = `
if True:
    NODE_CLASS_MAPPINGS = {
        "A": a,  # "NotAKey": in a comment
        "B":
            b,
        'C' : (1, {"Inner": 2}),
    }
register(NODE_CLASS_MAPPINGS.update({"D": d}))
`
    expect(extractHostNodeNames(src)).toEqual(['A', 'B', 'C', 'D'])
  })

  test('ignores files without mappings, values that are not keys, comparisons and mappings in strings or comments', () => {
    expect(extractHostNodeNames('print("NODE_CLASS_MAPPINGS")')).toEqual([])
    expect(extractHostNodeNames('NODE_CLASS_MAPPINGS = {k: v for k, v in items}')).toEqual([])
    expect(extractHostNodeNames('NODE_CLASS_MAPPINGS = {\n "Unterminated')).toEqual([])
    expect(extractHostNodeNames('if NODE_CLASS_MAPPINGS["X"] == Y: pass')).toEqual([])
    expect(extractHostNodeNames('# NODE_CLASS_MAPPINGS = {"Commented": C}')).toEqual([])
    expect(extractHostNodeNames('doc = """NODE_CLASS_MAPPINGS = {"Quoted": Q}"""')).toEqual([])
    expect(extractHostNodeNames('OTHER_NODE_CLASS_MAPPINGS = {"Other": O}')).toEqual([])
  })

  test('keys found before the source ends unexpectedly are kept', () => {
    expect(extractHostNodeNames('NODE_CLASS_MAPPINGS = {"A": a, "B": b')).toEqual(['A', 'B'])
  })
})

describe('scanHostNodes is linear', () => {
  // Each of these made the previous extractor rescan the rest of the text per match or per quote.
  const adversarial: Record<string, (n: number) => string> = {
    'nested openings': (n) => 'NODE_CLASS_MAPPINGS={'.repeat(n),
    'openings with keys': (n) => 'NODE_CLASS_MAPPINGS = {"k": '.repeat(n),
    'unterminated quotes': (n) => 'NODE_CLASS_MAPPINGS = {' + `"x'`.repeat(n),
    'unterminated triple quotes': (n) => 'NODE_CLASS_MAPPINGS = {' + '"""'.repeat(n) + "'''".repeat(n),
    'item assignments without end': (n) => 'NODE_CLASS_MAPPINGS["'.repeat(n),
    escapes: (n) => 'NODE_CLASS_MAPPINGS = {"' + '\\"'.repeat(n),
    'deep brackets': (n) => 'NODE_CLASS_MAPPINGS = ' + '{['.repeat(n),
  }

  for (const [name, make] of Object.entries(adversarial)) {
    test(`doubling the input doubles the work: ${name}`, () => {
      const small = make(20_000)
      const large = make(40_000)
      const work = (src: string) => scanHostNodes(src).visited
      // Each character is read a bounded number of times...
      expect(work(large)).toBeLessThan(4 * large.length)
      // ...so the work grows with the input, not with its square.
      expect(work(large) / work(small)).toBeLessThan(2.1)
    })
  }
})
