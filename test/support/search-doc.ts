/** A search document for the index's unit tests: an active node with nothing set but what the test gives. */
import type { SearchDoc } from '../../src/store/search-docs'

export const searchDoc = (fields: Pick<SearchDoc, 'id' | 'name'> & Partial<SearchDoc>): SearchDoc => ({
  status: 'active',
  description: '',
  author: '',
  tags: [],
  publisherId: 'p',
  publisherName: 'P',
  repositoryKey: '',
  osKeys: '',
  acceleratorKeys: '',
  searchRanking: 0,
  downloads: 0,
  updatedAt: '2026-01-01T00:00:00.000Z',
  hostNodes: [],
  ...fields,
})
