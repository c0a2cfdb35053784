/** A blob store whose first staging of a body is done another way (a slow or hung disk), for the lazy mirror's tests. */
import type { BlobStore, StagedBlob } from '../../src/blobs/blob-store'

/** `store`, its first `stage` done by `first`, given the body and the store's own staging; the others as they are. */
export function firstStaging(
  store: BlobStore,
  first: (body: ReadableStream<Uint8Array>, stage: (body: ReadableStream<Uint8Array>) => Promise<StagedBlob>) => Promise<StagedBlob>,
): BlobStore {
  let done = false
  return Object.assign(Object.create(store) as BlobStore, {
    stage(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<StagedBlob> {
      if (done) return store.stage(body, maxBytes)
      done = true
      return first(body, (b) => store.stage(b, maxBytes))
    },
  })
}
