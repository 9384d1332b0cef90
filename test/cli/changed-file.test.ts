/**
 * A file that changes size while it is uploaded fails its upload with words
 * that say so, and leaves no object (nor a multipart upload) behind: the
 * bytes sent would be neither the file as it was planned nor as it is now.
 * The file is cut or grown by a transport wrapped around the local one, just
 * before its bytes are read, through the engine of a real data directory.
 */
import t from 'tap'
import { appendFileSync, truncateSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import { uploadFile } from '../../src/cli/transfer.js'
import { LocalTransport } from '../../src/cli/transport-local.js'
import type { ObjectTransport } from '../../src/cli/transport.js'
import { testdir } from '../testdir.js'

const MiB = 1024 * 1024
const tuning = { partSize: 5 * MiB, parallel: 2 }
const noMetadata = { httpMetadata: {}, customMetadata: {} }
const tracker = { add () {}, end () {} }

/** The local transport, whose put and createUpload first do `change`. */
class ChangingTransport extends LocalTransport {
  readonly #change: () => void

  constructor (dataDir: string, change: () => void) {
    super(dataDir, async dir => await openRegistry(dir, { fsync: false }))
    this.#change = change
  }

  override async put (...args: Parameters<ObjectTransport['put']>): ReturnType<ObjectTransport['put']> {
    this.#change()
    return await super.put(...args)
  }

  override async createUpload (...args: Parameters<ObjectTransport['createUpload']>): ReturnType<ObjectTransport['createUpload']> {
    this.#change()
    return await super.createUpload(...args)
  }
}

/** What the bucket holds: its objects' keys, and its uploads' in progress. */
async function left (dataDir: string): Promise<{ objects: string[], uploads: string[] }> {
  const registry = await openRegistry(dataDir, { fsync: false })
  try {
    const bucket = (await registry.open('bkt'))!
    return { objects: (await bucket.list()).objects.map(o => o.key), uploads: (await bucket.listMultipartUploads()).uploads.map(u => u.key) }
  } finally {
    await registry.close()
  }
}

const cases = [
  { name: 'a file that shrinks during a multipart upload', size: 12 * MiB, change: (file: string) => { truncateSync(file, 7 * MiB) } },
  { name: 'a file that grows during a multipart upload', size: 12 * MiB, change: (file: string) => { appendFileSync(file, 'more') } },
  { name: 'a file that shrinks during a put', size: MiB, change: (file: string) => { truncateSync(file, 1000) } },
  { name: 'a file that grows during a put', size: MiB, change: (file: string) => { appendFileSync(file, 'more') } }
]

for (const { name, size, change } of cases) {
  t.test(`${name} fails as changed, and stores nothing`, async t => {
    const root = testdir(t)
    const file = path.join(root, 'big.bin')
    await writeFile(file, Buffer.alloc(size, 7))
    const dataDir = path.join(root, 'data')
    const transport = new ChangingTransport(dataDir, () => { change(file) })
    await transport.createBucket('bkt')
    await t.rejects(uploadFile(transport, 'bkt', 'k', file, size, noMetadata, tuning, tracker),
      { message: `the file changed while it was read (its size is no longer the ${size} bytes planned)` })
    await transport.close()
    t.same(await left(dataDir), { objects: [], uploads: [] }, 'no object, no upload')
  })
}
