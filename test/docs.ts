/**
 * The reference pages in docs/, as the tests that check them against the
 * code read them: a page whole, or one section of it, from its heading to
 * the next heading of the same or a higher level.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project's docs/ directory (tests run from dist/test/). */
export const docsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs')

export async function docsPage (file: string): Promise<string> {
  return await readFile(path.join(docsDir, file), 'utf8')
}

/** The section under `heading` (a whole heading line, e.g. `## Error codes of the S3 API`), or '' when the page has none. */
export async function docsSection (file: string, heading: string): Promise<string> {
  const lines = (await docsPage(file)).split('\n')
  const start = lines.indexOf(heading)
  if (start === -1) return ''
  const level = heading.indexOf(' ')
  const next = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line) && line.indexOf(' ') <= level)
  return lines.slice(start + 1, next === -1 ? undefined : next).join('\n')
}
