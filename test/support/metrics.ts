/** Reads a Prometheus text scrape: the value of one series, named and labelled exactly. */

export type Scrape = { name: string; labels: Record<string, string>; value: number }[]

export function parseScrape(text: string): Scrape {
  const out: Scrape = []
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!m) continue
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]))
    out.push({ name: m[1]!, labels, value: m[3] === '+Inf' ? Infinity : m[3] === '-Inf' ? -Infinity : Number(m[3]) })
  }
  return out
}

/** The series with exactly these labels; undefined when absent. */
export function series(scrape: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort())
  return scrape.find((s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want)?.value
}
