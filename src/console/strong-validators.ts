/**
 * The two conditions RFC 9110 judges by strong comparison, for the
 * console's files: `If-Match` (13.1.1) and `If-Range` (13.1.5).
 *
 * `@fastify/send`, which answers the files, compares both weakly: it takes
 * `"x"` and `W/"x"` alike for its ETag `W/"x"`, so a failed `If-Match`
 * answered 200 where 412 is due, and an `If-Range` naming the ETag applied
 * the Range (206) where the whole file (200) is due. Its ETags are weak
 * (`W/"<size>-<mtime>"`), and a weak tag never matches strongly: against
 * them only `If-Match: *` holds, and an `If-Range` holds only by a date.
 * serve.ts judges the two here, against the validators `send` gives the
 * file, and hands `send` the request without them; the other conditions
 * (`If-None-Match`, `If-Modified-Since`, `If-Unmodified-Since`, judged
 * weakly or by date as RFC 9110 asks) stay `send`'s.
 *
 * What this does not do: the engine's objects are judged in
 * src/bucket/conditional.ts; these are files of the build, outside it.
 */

interface EntityTag { weak: boolean, opaque: string }

const entityTag = /^(W\/)?"([^"]*)"$/

function parseTag (text: string): EntityTag | null {
  const match = entityTag.exec(text.trim())
  return match === null ? null : { weak: match[1] !== undefined, opaque: match[2] }
}

/** The entity tags of a list (`"a", W/"b"`); null when the list is malformed. */
function parseTagList (list: string): EntityTag[] | null {
  const tags: EntityTag[] = []
  const element = /\s*((?:W\/)?"[^"]*")\s*(?:,|$)/y
  while (element.lastIndex < list.length) {
    const at = element.lastIndex
    const match = element.exec(list)
    if (match === null || element.lastIndex === at) return null
    tags.push(parseTag(match[1]) as EntityTag)
  }
  return tags
}

/** RFC 9110 8.8.3.2: both strong, the same opaque tag. */
function strongMatch (a: EntityTag, b: EntityTag): boolean {
  return !a.weak && !b.weak && a.opaque === b.opaque
}

/**
 * Whether `If-Match` holds for a file whose ETag is `etag` (the file
 * exists): `*`, or a listed tag that strongly matches it. A malformed list
 * matches nothing.
 */
export function ifMatchHolds (ifMatch: string, etag: string | undefined): boolean {
  if (ifMatch.trim() === '*') return true
  const current = etag === undefined ? null : parseTag(etag)
  const listed = parseTagList(ifMatch)
  return current !== null && listed !== null && listed.some(tag => strongMatch(tag, current))
}

/**
 * Whether `If-Range` lets a Range apply: an entity tag that strongly
 * matches `etag`, or an HTTP-date equal to `lastModified` when that is a
 * strong validator (RFC 9110 8.8.2.2: the file has not changed within the
 * second it names, so it is a second or more before `now`). Anything else
 * (a weak tag, another date, no date) answers the whole file.
 */
export function ifRangeHolds (ifRange: string, etag: string | undefined, lastModified: string | undefined, now: Date): boolean {
  const value = ifRange.trim()
  if (value.startsWith('"') || value.startsWith('W/')) {
    const given = parseTag(value)
    const current = etag === undefined ? null : parseTag(etag)
    return given !== null && current !== null && strongMatch(given, current)
  }
  if (lastModified === undefined) return false
  const given = Date.parse(value)
  const modified = Date.parse(lastModified)
  return !Number.isNaN(given) && given === modified && modified <= now.getTime() - 1000
}
