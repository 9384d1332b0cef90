/**
 * An upload still arriving, for races with what happens meanwhile (a
 * bucket deleted, created again): a body that sends its first bytes, then
 * waits to be released before the rest; and the files its store made.
 */
import { existsSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'

/** `bytes` as a stream that sends the first `at` of them, then the rest once `release()` is called. */
export function heldBody (bytes: Buffer, at: number): { payload: Readable, release: () => void } {
  let release!: () => void
  const released = new Promise<void>(resolve => { release = resolve })
  const payload = Readable.from((async function * () {
    yield bytes.subarray(0, at)
    await released
    yield bytes.subarray(at)
  })())
  return { payload, release }
}

/** Every file under `dir`, relative to it (none while it does not exist). */
export function filesUnder (dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(e => e.isFile()).map(e => path.relative(dir, path.join(e.parentPath, e.name)))
}
