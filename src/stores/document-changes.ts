/**
 * What one change of a set of JSON documents has read, changed and
 * removed: the bookkeeping every storage's DocumentTransaction shares (files
 * of a directory, rows of PostgreSQL, a map in memory). A storage reads a
 * document its own way (`load`'s `read`), and at commit writes back what
 * `changed()` and `removed()` name. A document is compared as JSON with what
 * was read, so one read and left as it was is never written.
 */
import { storageFailure } from '../bucket/port.js'

export class DocumentChanges {
  readonly #loaded = new Map<string, { before: string | undefined, value: unknown }>()
  readonly #removed = new Set<string>()

  /** The document `name` as this change sees it: read once (`read` gives undefined for none), then the same object. */
  async load<T> (name: string, fallback: T, read: () => Promise<T | undefined>): Promise<T> {
    const loaded = this.#loaded.get(name)
    if (loaded !== undefined) return loaded.value as T
    const stored = await read()
    const value = stored === undefined ? fallback : stored
    this.#loaded.set(name, { before: JSON.stringify(value), value })
    this.#removed.delete(name)
    return value
  }

  remove (name: string): void {
    this.#loaded.delete(name)
    this.#removed.add(name)
  }

  /** The documents loaded and changed since (their JSON differs from what was read). */
  * changed (): Generator<[name: string, value: unknown]> {
    for (const [name, { before, value }] of this.#loaded) {
      const text = JSON.stringify(value) as string | undefined
      if (text !== undefined && text !== before) yield [name, value]
    }
  }

  removed (): Iterable<string> {
    return this.#removed
  }
}

/**
 * `text`, a stored document, parsed; one that is not JSON (edited by hand
 * and left broken) is StateDamaged of `doing`, naming `where` (the file's
 * path, or the catalog's row), with what is wrong in its cause, for the log. V8's
 * complaint quotes the text around the fault (`"abcdef0123"...`), so for a
 * document that may hold secrets (`secrets`: a private directory's, a
 * catalog's) only the fault's position is told, when V8 gives one.
 */
export function parseDocument<T> (text: string, where: string, secrets: boolean, doing: string): T {
  try {
    return JSON.parse(text) as T
  } catch (err) {
    const message = (err as Error).message
    const why = secrets ? unquoted(message) : message
    throw storageFailure('StateDamaged', doing, { path: where, cause: new SyntaxError(`${where} is not valid JSON: ${why}`) })
  }
}

/** V8's complaint about JSON text, less any of the text: where the fault is, when it says. */
function unquoted (message: string): string {
  const position = /at position \d+/.exec(message)?.[0]
  const hidden = 'the text is not quoted, as it may hold secrets'
  return position === undefined ? hidden : `the fault is ${position} (${hidden})`
}
