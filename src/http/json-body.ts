/** Answers whose JSON is already text: sent as it is, without parsing and serializing it again. */

const JSON_HEADERS = { 'content-type': 'application/json' }

/** JSON text made elsewhere (a cache's, a memo's, a page of nodes). */
export const jsonText = (text: string) => new Response(text, { headers: JSON_HEADERS })
