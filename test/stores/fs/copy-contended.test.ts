/**
 * A copy in the filesystem store whose source's body file is gone at every
 * attempt to link it (as when the source is replaced again and again while
 * it is copied): after its attempts the copy fails with the catalogue's
 * 10909 (CopySourceContended, 503), never a raw ENOENT, and stores nothing;
 * through the S3 door the same copy is ServiceUnavailable.
 */
import { rmSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { isBucketError } from '../../../src/bucket/index.js'
import { openBucket } from '../../../src/index.js'
import { testdir } from '../../testdir.js'

t.test('a copy whose source is replaced at every attempt fails with 10909, storing nothing', async t => {
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir)
  t.teardown(() => bucket.close())
  // Large enough to live in a body file of its own (not inline in the catalog).
  const put = await bucket.put('src', Buffer.alloc(256 * 1024, 7))
  const version = put!.version
  rmSync(path.join(dir, '.fsbucket', 'blobs', version.slice(0, 2), version))
  const failure = await bucket.copy('src', 'dst').then(() => null, (err: unknown) => err)
  t.ok(isBucketError(failure), 'a catalogue error, not a raw file-system one')
  t.same(isBucketError(failure) ? [failure.code, failure.status, failure.errorName] : failure, [10909, 503, 'CopySourceContended'])
  t.match((failure as Error).message, /^copy: The copy source kept changing while it was copied\. Please try again\. \(10909\)$/)
  t.equal(await bucket.head('dst'), null, 'nothing stored')
})
