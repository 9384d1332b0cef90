/**
 * Copying an object within a bucket: the engine checks the arguments and
 * builds the copy's record (the source's bytes, size, etag and checksums;
 * its metadata unless replaced; a new version and upload time); the store
 * shares the bytes and commits, judging the source's conditions and the
 * destination's inside its critical section (port.ts, `copy`).
 *
 * A copy keeps the source's etag, a multipart object's `<md5>-<parts>`
 * included: the bytes are not read, so no new digest exists.
 */
import { isUnconditional, judgeRecord, parseConditional } from './conditional.js'
import { keyId } from './keys.js'
import { parseCustomMetadata, parseHttpMetadata, parseStorageClass } from './metadata.js'
import { ObjectMetadata } from './object.js'
import type { BucketStore, CopyBuilder } from './port.js'
import type { BucketCopyOptions, BucketCopyOutcome } from './types.js'

export async function copyObject (
  store: BucketStore, sourceKey: string, key: string, opts: Partial<BucketCopyOptions>, fresh: { now: number, version: string }
): Promise<BucketCopyOutcome> {
  const fromId = keyId('copy', sourceKey)
  const toId = keyId('copy', key)
  const conditional = parseConditional(opts.onlyIf, 'copy')
  const sourceConditional = parseConditional(opts.sourceOnlyIf, 'copy')
  const httpMetadata = opts.httpMetadata === undefined ? undefined : parseHttpMetadata('copy', opts.httpMetadata)
  const customMetadata = opts.customMetadata === undefined ? undefined : parseCustomMetadata('copy', opts.customMetadata)
  const storageClass = opts.storageClass === undefined ? undefined : parseStorageClass('copy', opts.storageClass)
  const unconditional = isUnconditional(conditional)

  const build: CopyBuilder = source => judgeRecord(sourceConditional, source) !== 'pass'
    ? null
    : {
        ...source,
        key,
        version: fresh.version,
        uploaded: fresh.now,
        httpMetadata: httpMetadata ?? source.httpMetadata,
        customMetadata: customMetadata ?? source.customMetadata,
        storageClass: storageClass ?? source.storageClass
      }
  const outcome = await store.copy(fromId, toId, build, current => unconditional || judgeRecord(conditional, current) === 'pass')
  switch (outcome.status) {
    case 'copied': return { status: 'copied', object: new ObjectMetadata(outcome.object) }
    case 'no-source': return { status: 'not-found' }
    case 'source-refused': return { status: 'source-precondition-failed', source: new ObjectMetadata(outcome.source) }
    case 'refused': return { status: 'precondition-failed' }
  }
}
