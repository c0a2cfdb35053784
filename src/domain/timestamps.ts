/**
 * Times from other systems (an upstream registry, the video provider) and from people (query parameters, flags) in
 * our wire form: RFC 3339 UTC with milliseconds.
 */

/** A date, or a date and time with an optional fraction and zone: `2026-11-23`, `2026-11-23T14:30:00.123456+08:00`. */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)([Zz]|[+-]\d{2}:?\d{2})?)?$/

/**
 * `value` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (an upstream sends microseconds, a provider its own zone); a missing time,
 * or one that is not a date-time, becomes `fallback`. A time without a zone is taken as UTC: JavaScript would read
 * it in the server's zone, so the answer would depend on where the server runs.
 */
export function normalizeTime(value: unknown, fallback: string): string {
  return (typeof value === 'string' && parseTime(value.trim())) || fallback
}

/**
 * A date or date-time a person or client gave (`?timestamp=`, `--since`) in our wire form, or undefined when it is
 * not one: `Date.parse` alone takes `0` as the year 2000 and `1 May` as a date, and reads a zoneless time in the
 * server's zone. A time without a zone is UTC, as in `normalizeTime`.
 */
export function parseTime(value: string): string | undefined {
  const m = DATE_TIME.exec(value)
  if (!m || !exists(m[1]!, m[2])) return undefined
  const ms = Date.parse(m[2] ? `${m[1]}T${m[2]}${m[3] ?? 'Z'}` : m[1]!)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** Whether the fields name a real day and time of day: JavaScript rolls 2024-02-30 over to March 1st and 24:00 to the next day. */
function exists(date: string, time: string | undefined): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number]
  // The day of the month checked in a leap year (2000), and February 29th in its own year.
  const calendar = new Date(Date.UTC(2000, month - 1, day))
  if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return false
  if (month === 2 && day === 29 && new Date(Date.UTC(year, 1, 29)).getUTCDate() !== 29) return false
  if (!time) return true
  const [hour, minute, second = 0] = time.split(':').map(Number) as [number, number, number?]
  return hour <= 23 && minute <= 59 && second < 60
}
