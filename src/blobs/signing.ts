/** Signed upload URLs: HMAC-SHA256 over method, path, content type and expiry. */
import { createHmac, timingSafeEqual } from 'node:crypto'

export interface SignedRequest {
  method: string
  path: string
  contentType: string
  expires: number
}

export interface UrlSigner {
  /** Query string (`expires=…&signature=…`) that authorises exactly this request until `expires`. */
  sign(req: SignedRequest): string
  /** Whether `signature` is valid for the request; the caller checks expiry separately. */
  verify(req: SignedRequest, signature: string): boolean
}

const canonical = (r: SignedRequest) => [r.method.toUpperCase(), r.path, r.contentType.toLowerCase(), String(r.expires)].join('\n')

export function createUrlSigner(secret: string): UrlSigner {
  const mac = (r: SignedRequest) => createHmac('sha256', secret).update(canonical(r)).digest()
  return {
    sign(req) {
      return `expires=${req.expires}&signature=${mac(req).toString('hex')}`
    },
    verify(req, signature) {
      if (!/^[0-9a-f]{64}$/.test(signature)) return false
      return timingSafeEqual(mac(req), Buffer.from(signature, 'hex'))
    },
  }
}

/** The query parameters a signed URL carries; any other, or one of these twice, is a change to the URL. */
const SIGNED_PARAMS = new Set(['expires', 'signature'])

export interface SignedQuery {
  /** The expiry in seconds, only when written exactly as the server signs it (no sign, leading zero, fraction or exponent). */
  expires: number | undefined
  signature: string | undefined
  /** Whether the query holds a parameter the server did not sign, or repeats one it did. */
  altered: boolean
}

/** Reads a signed URL's query string (`?expires=…&signature=…`, the leading `?` optional). */
export function readSignedQuery(search: string): SignedQuery {
  const params = new URLSearchParams(search)
  const names = [...params.keys()]
  return {
    expires: canonicalSeconds(params.get('expires')),
    signature: params.get('signature') ?? undefined,
    altered: names.length !== new Set(names).size || names.some((name) => !SIGNED_PARAMS.has(name)),
  }
}

/** `String(n)` for a positive safe integer `n` is the only spelling that reads back: `+9`, `09` and `9.0` are a change to the URL. */
function canonicalSeconds(text: string | null): number | undefined {
  const n = text !== null && /^[1-9]\d{0,15}$/.test(text) ? Number(text) : undefined
  return n !== undefined && Number.isSafeInteger(n) ? n : undefined
}

/** The media type alone, lower-cased: `Application/Zip; charset=x` -> `application/zip`. */
export const mediaType = (header: string | undefined) => (header ?? '').split(';')[0]!.trim().toLowerCase()
