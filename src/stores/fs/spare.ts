/**
 * The spare file of a bucket directory: a file of SPARE_BYTES kept so that
 * a deletion can free space on a full disk. SQLite needs a little room (WAL
 * pages) to write even a deletion, so a delete refused for a full disk
 * removes the spare and tries again; the deleted bodies then free far more,
 * and the spare is made again.
 */
import { promises as fsp } from 'node:fs'
import path from 'node:path'

const SPARE_BYTES = 1024 * 1024

export function spareFile (root: string): string {
  return path.join(root, 'spare')
}

/** Makes the spare file when it is missing; best effort (on a full disk there is no room for it, and that is fine). */
export async function reserveSpare (root: string): Promise<void> {
  const file = spareFile(root)
  let handle: Awaited<ReturnType<typeof fsp.open>> | undefined
  try {
    handle = await fsp.open(file, 'wx')
    await handle.write(Buffer.alloc(SPARE_BYTES))
    await handle.close()
  } catch (err) {
    await handle?.close().catch(() => {})
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await fsp.rm(file, { force: true }).catch(() => {})
  }
}

/** Removes the spare file, to give SQLite room for a deletion on a full disk. */
export async function releaseSpare (root: string): Promise<void> {
  await fsp.rm(spareFile(root), { force: true })
}
