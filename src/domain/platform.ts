/** Normal forms for the values search filters compare: OS and accelerator paths, repository URLs. */

/** `POSIX::Linux` and `posix :: linux` both become `posix :: linux`. */
export function normalizePlatformValue(value: string): string {
  return value
    .trim()
    .toLowerCase()
    .split('::')
    .map((part) => part.trim().replace(/\s+/g, ' '))
    .filter(Boolean)
    .join(' :: ')
}

/** The stored key of a list of platform values: '|a|b|', or '' when nothing is declared. */
export function platformKeys(values: readonly string[]): string {
  const keys = [...new Set(values.map(normalizePlatformValue).filter(Boolean))]
  return keys.length ? `|${keys.join('|')}|` : ''
}

export const OS_INDEPENDENT = 'os independent'

/** `https://www.GitHub.com/Foo/bar.git/` -> `github.com/foo/bar`. */
export function repositoryKey(url: string): string {
  return url
    .trim()
    .toLowerCase()
    .replace(/^[a-z][a-z0-9+.-]*:\/\//, '')
    .replace(/^git@([^:/]+):/, '$1/')
    .replace(/^www\./, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '')
}
