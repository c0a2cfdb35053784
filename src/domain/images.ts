/** Which images the video proxy accepts: the media types, how bytes show their type, and the image references a task may carry. */

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const
export type ImageType = (typeof IMAGE_TYPES)[number]

export const isImageType = (s: string): s is ImageType => (IMAGE_TYPES as readonly string[]).includes(s)

const startsWith = (bytes: Uint8Array, prefix: readonly number[], at = 0) => prefix.every((b, i) => bytes[at + i] === b)
const ascii = (s: string) => [...s].map((ch) => ch.charCodeAt(0))

/** The image type the first bytes announce (12 are enough), or undefined when they are none of ours. */
export function sniffImage(head: Uint8Array): ImageType | undefined {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png'
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg'
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp'
  return undefined
}

export const SNIFF_BYTES = 12

/** How many bytes a base64 text of this length (padding included) decodes to. */
export const base64DecodedSize = (text: string) => (text.length / 4) * 3 - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0)

/** The base64 length of `bytes` bytes. */
export const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4

export const MAX_IMAGE_URL_LENGTH = 4096

const DATA_URI = /^data:(image\/(?:png|jpeg|webp));base64,/i
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * Why `ref` cannot be an image of a video task, or undefined when it can: an http(s) URL (the provider fetches it),
 * or a `data:image/png|jpeg|webp;base64,` URI of well-formed base64 whose bytes are that type and at most `maxBytes`.
 * Every other scheme (`file:` among them) is refused.
 */
export function imageReferenceProblem(ref: string, maxBytes: number): string | undefined {
  if (/^data:/i.test(ref)) {
    const m = DATA_URI.exec(ref)
    if (!m) return 'a data: URI must be data:image/png, data:image/jpeg or data:image/webp with ;base64,'
    const payload = ref.slice(m[0].length)
    if (payload.length % 4 !== 0 || !BASE64.test(payload)) return 'the data: URI does not hold valid base64'
    const size = base64DecodedSize(payload)
    if (size === 0) return 'the data: URI holds no image'
    if (size > maxBytes) return `the image is ${size} bytes; the limit is ${maxBytes}`
    const type = m[1]!.toLowerCase()
    if (sniffImage(Buffer.from(payload.slice(0, 16), 'base64')) !== type) return `the data: URI's bytes are not a ${type} image`
    return undefined
  }
  if (ref.length > MAX_IMAGE_URL_LENGTH) return `an image URL must be at most ${MAX_IMAGE_URL_LENGTH} characters`
  const url = URL.parse(ref)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname || /\s/.test(ref)) {
    return 'must be an https:// or http:// URL, or a data:image/png|jpeg|webp;base64, URI'
  }
  return undefined
}
