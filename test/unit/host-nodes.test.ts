import { describe, expect, test } from 'bun:test'
import { extractHostNodeNames } from '../../src/archive/host-nodes'

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

  test('reads item assignments, update() calls and annotated assignments', () => {
    const src = `
NODE_CLASS_MAPPINGS: dict[str, type] = {"Annotated": A}
NODE_CLASS_MAPPINGS["Item"] = Item
NODE_CLASS_MAPPINGS.update({"Updated": U, "With \\"escape\\"": E})
`
    expect(extractHostNodeNames(src)).toEqual(['Annotated', 'Updated', 'With "escape"', 'Item'])
  })

  test('ignores files without mappings and values that are not keys', () => {
    expect(extractHostNodeNames('print("NODE_CLASS_MAPPINGS")')).toEqual([])
    expect(extractHostNodeNames('NODE_CLASS_MAPPINGS = {k: v for k, v in items}')).toEqual([])
    expect(extractHostNodeNames('NODE_CLASS_MAPPINGS = {\n "Unterminated')).toEqual([])
  })
})
