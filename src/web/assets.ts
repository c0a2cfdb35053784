/**
 * The pages' stylesheet, script and icon, embedded in the executable and served from it (nothing is fetched from
 * elsewhere). Names carry a hash of the content, so browsers may keep them for a year and still see a new release.
 */
import css from './assets/app.css' with { type: 'text' }
import script from './assets/app.js' with { type: 'text' }
import icon from './assets/icon.svg' with { type: 'text' }

interface Asset {
  name: string
  type: string
  body: string
}

function asset(stem: string, ext: string, type: string, body: string): Asset {
  const hash = new Bun.CryptoHasher('sha256').update(body).digest('hex').slice(0, 12)
  return { name: `${stem}.${hash}.${ext}`, type, body }
}

export const ASSETS = {
  css: asset('app', 'css', 'text/css; charset=utf-8', css),
  script: asset('app', 'js', 'text/javascript; charset=utf-8', script),
  icon: asset('icon', 'svg', 'image/svg+xml', icon),
}

const byName = new Map(Object.values(ASSETS).map((a) => [a.name, a]))

/** The asset of that name, as a response cached for a year; undefined for any other name. */
export function assetResponse(name: string): Response | undefined {
  const found = byName.get(name)
  if (!found) return undefined
  return new Response(found.body, {
    headers: { 'Content-Type': found.type, 'Cache-Control': 'public, max-age=31536000, immutable' },
  })
}
