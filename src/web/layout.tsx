/** The frame of every page: title, the stylesheet and script served from here, header, navigation, main, footer. */
import type { Child } from 'hono/jsx'
import { ASSETS } from './assets'
import type { MirrorStatus } from '../services/mirror/provenance'
import type { Links } from './links'
import { MirrorFooter } from './origin'

export interface PageProps {
  /** What the page is about; the site name follows it in the title. */
  title: string
  /** Which navigation entry is the current page. */
  section?: 'browse' | 'clients'
}

declare module 'hono' {
  interface ContextRenderer {
    (content: Child, props: PageProps): Response | Promise<Response>
  }
}

export const SITE_NAME = 'registry-mirror'

/** What the browser's tab says for a page titled `title` (the live search sets it too, as its results arrive). */
export const documentTitle = (title: string) => `${title} · ${SITE_NAME}`

/** `mirror` is the registry's own mirror state while `serve --sync-from` runs, read from memory for each page. */
export function layout(links: Links, mirror: () => MirrorStatus | undefined, now: () => Date) {
  return ({ children, title, section }: PageProps & { children?: Child }) => (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{documentTitle(title)}</title>
        <link rel="icon" href={links.asset(ASSETS.icon.name)} type="image/svg+xml" />
        <link rel="stylesheet" href={links.asset(ASSETS.css.name)} />
        <script src={links.asset(ASSETS.script.name)} defer></script>
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <div class="wrap">
            <a class="brand" href={links.home()}>
              {SITE_NAME}
            </a>
            <nav aria-label="Main">
              <ul>
                <li>
                  <a href={links.home()} aria-current={section === 'browse' ? 'page' : undefined}>
                    Browse nodes
                  </a>
                </li>
                <li>
                  <a href={links.clients()} aria-current={section === 'clients' ? 'page' : undefined}>
                    Clients
                  </a>
                </li>
                <li>
                  <a href={links.openapi()}>API</a>
                </li>
              </ul>
            </nav>
          </div>
        </header>
        <main id="main" class="wrap">
          {children}
        </main>
        <footer class="site-footer">
          <div class="wrap">
            Served by {SITE_NAME} at <code>{links.publicUrl}</code>. Nothing on these pages is loaded from anywhere else.
            <MirrorFooter status={mirror()} now={now()} />
          </div>
        </footer>
      </body>
    </html>
  )
}
