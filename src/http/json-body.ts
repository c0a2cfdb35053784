/** Answers whose JSON is already text: sent as it is, without parsing and serializing it again. */

const JSON_HEADERS = { 'content-type': 'application/json' }

/** JSON text made elsewhere (a cache's, a memo's). */
export const jsonText = (text: string) => new Response(text, { headers: JSON_HEADERS })

/** JSON text in parts (a page of nodes): a Blob of them, never joined into one string. */
export const jsonOfParts = (parts: string[]) => new Response(new Blob(parts), { headers: JSON_HEADERS })
