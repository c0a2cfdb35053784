/** What a page says when it cannot be shown: the status, the reason (already safe to show), and a way on. */
import type { AppError } from '../errors'
import type { Links } from './links'

const HEADINGS: Partial<Record<number, string>> = {
  400: 'That request is not valid',
  403: 'Not available',
  404: 'Not found',
  500: 'Something went wrong',
}

export const errorTitle = (err: AppError) => HEADINGS[err.status] ?? `Error ${err.status}`

export function ErrorPage({ error, links }: { error: AppError; links: Links }) {
  return (
    <>
      <h1>{errorTitle(error)}</h1>
      <p>{error.message}</p>
      <p class="muted">Status {error.status}.</p>
      <p>
        <a href={links.home()}>Search the registry</a>
      </p>
    </>
  )
}
