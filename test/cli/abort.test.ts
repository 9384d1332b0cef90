/**
 * A multipart upload the command gives up on is aborted, whether a part or
 * the completion failed: its parts never wait for the sweeper.
 */
import t from 'tap'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { uploadFile } from '../../src/cli/transfer.js'
import type { ObjectTransport, PartUpload, UploadedPart } from '../../src/cli/transport.js'
import { testdir } from '../testdir.js'

function transportWith (fail: 'part' | 'complete'): { transport: ObjectTransport, aborted: () => number } {
  let aborts = 0
  const upload: PartUpload = {
    uploadPart: async (partNumber, body) => {
      for await (const chunk of body) void chunk
      if (fail === 'part' && partNumber === 2) throw new Error('part 2 refused')
      return { partNumber, etag: `e${partNumber}` } satisfies UploadedPart
    },
    complete: async () => { throw new Error('completion refused') },
    abort: async () => { aborts++ }
  }
  const transport = { createUpload: async () => upload } as unknown as ObjectTransport
  return { transport, aborted: () => aborts }
}

for (const fail of ['part', 'complete'] as const) {
  t.test(`a failed ${fail === 'part' ? 'part' : 'completion'} aborts the upload`, async t => {
    const file = path.join(testdir(t), 'big.bin')
    await writeFile(file, Buffer.alloc(3 * 1024))
    const { transport, aborted } = transportWith(fail)
    const tracker = { add () {}, end () {} }
    await t.rejects(uploadFile(transport, 'b', 'k', file, 3 * 1024, { httpMetadata: {}, customMetadata: {} }, { partSize: 1024, parallel: 2 }, tracker), fail === 'part' ? /part 2/ : /completion/)
    t.equal(aborted(), 1, 'aborted once')
  })
}
