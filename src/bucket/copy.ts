/**
 * Copying an object within a bucket: the engine checks the arguments and
 * builds the copy's record (the source's bytes, size, etag and checksums;
 * its metadata unless replaced or merged; a new version and upload time); the store
 * shares the bytes and commits, judging the source's conditions and the
 * destination's inside its critical section (port.ts, `copy`).
 *
 * A copy is a single-part object, as S3's CopyObject makes it: its ETag is
 * the MD5 of its bytes. A multipart source's `<md5-of-md5s>-<parts>` is not,
 * and a checksum asked for (`checksumAlgorithm`, S3's
 * x-amz-checksum-algorithm) may not be among the source's: then the bytes
 * are read from the source as it was when opened and written again (staged
 * and committed as a put is), the digests computed as they stream. The
 * source's conditions are judged on that same record, the destination's in
 * the commit's critical section.
 */
import { Readable } from 'node:stream'
import type { ReadableStream as NodeReadableStream } from 'node:stream/web'
import { hashAlgorithms, type HashAlgorithm } from './checksums.js'
import { isUnconditional, judgeRecord, parseConditional } from './conditional.js'
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import { keyId, lookupId } from './keys.js'
import { isMultipartRecord } from './multipart.js'
import { mergeCustomMetadata, parseCustomMetadata, parseHttpMetadata, parseStorageClass } from './metadata.js'
import { ObjectBody, ObjectMetadata } from './object.js'
import { ALWAYS, type BucketStore, type CopyBuilder, type StagedBody, type StoredObject } from './port.js'
import type { BucketCopyOptions, BucketCopyOutcome, BucketObjectBody } from './types.js'
import { withFields } from './records.js'
import { MeasuredBody } from './value.js'
import { MAX_COPY_BYTES } from './limits.js'
import { newSsecRecord, parseSsecKey, readerWithKey, SealedBody } from './ssec.js'


/** Whether the copy of `source` needs its bytes read: a multipart source, or a checksum it does not have. */
function needsBytes (source: StoredObject, algorithm: HashAlgorithm | undefined): boolean {
  return isMultipartRecord(source) || (algorithm !== undefined && source.checksums[algorithm] === undefined)
}

/**
 * The checksums a copy made from the bytes carries (S3's CopyObject): the
 * one asked for, else every one the source had, a composite one as a
 * whole-object one. Also the rule of the S3 door's copies between buckets.
 */
export function copiedChecksums<A extends HashAlgorithm> (had: A[], composite: A | undefined, asked: A | undefined): A[] {
  if (asked !== undefined) return [asked]
  return [...new Set([...had, ...(composite === undefined ? [] : [composite])])]
}

/**
 * The bytes of a copy from another bucket (S3's CopyObject between buckets,
 * through `putCopied`, and UploadPartCopy): `source`, as the source bucket's
 * `get` served it (the whole object, or the range asked for). A source
 * serving more than a copy may carry is refused (EntityTooLarge, as a copy
 * within a bucket is) before a byte of it is read, its files closed: the
 * write it feeds would learn its size only as it read, after writing up to
 * 5 GiB.
 */
export function copiedBytes (method: string, source: BucketObjectBody): Buffer | Readable {
  const stream = (): Readable => source instanceof ObjectBody ? source.nodeStream() : Readable.fromWeb(source.body as NodeReadableStream)
  if ((source.range?.length ?? source.size) > MAX_COPY_BYTES) {
    stream().destroy()
    throw new BucketError('EntityTooLarge', method)
  }
  return (source instanceof ObjectBody ? source.bufferedBytes() : undefined) ?? stream()
}

function copiedAlgorithms (source: StoredObject, asked: HashAlgorithm | undefined): HashAlgorithm[] {
  const had = hashAlgorithms.filter(a => source.checksums[a] !== undefined)
  return [...new Set<HashAlgorithm>(['md5', ...copiedChecksums(had, source.checksums.multipart?.composite?.algorithm, asked)])]
}

const rewriteNeeded = new Error('the copy needs its bytes read')

export async function copyObject (
  store: BucketStore, sourceKey: string, key: string, opts: Partial<BucketCopyOptions>, fresh: { now: number, version: string }
): Promise<BucketCopyOutcome> {
  const fromId = lookupId('copy', sourceKey)
  const toId = keyId('copy', key)
  const conditional = parseConditional(opts.onlyIf, 'copy')
  const sourceConditional = parseConditional(opts.sourceOnlyIf, 'copy')
  const httpMetadata = opts.httpMetadata === undefined ? undefined : parseHttpMetadata('copy', opts.httpMetadata)
  const customMetadata = opts.customMetadata === undefined ? undefined : parseCustomMetadata('copy', opts.customMetadata)
  const storageClass = opts.storageClass === undefined ? undefined : parseStorageClass('copy', opts.storageClass)
  const algorithm = opts.checksumAlgorithm
  if (algorithm !== undefined && !(hashAlgorithms as readonly string[]).includes(algorithm)) {
    throw new TypeError(`copy: ${String(algorithm)} is not a checksum algorithm.`)
  }
  const sourceSsecKey = parseSsecKey('copy', opts.sourceSsecKey)
  const ssecKey = parseSsecKey('copy', opts.ssecKey)
  const unconditional = isUnconditional(conditional)
  const destination = unconditional ? ALWAYS : (current: StoredObject | null) => judgeRecord(conditional, current) === 'pass'
  const merge = opts.mergeMetadata === true
  // A merge is made of the source as the copy reads it; the merged custom metadata is held to the same limits as any.
  const copyOf = (source: StoredObject): StoredObject => withFields(source, {
    key,
    version: fresh.version,
    uploaded: fresh.now,
    httpMetadata: merge && httpMetadata !== undefined ? Object.assign({}, source.httpMetadata, httpMetadata) : httpMetadata,
    customMetadata: merge && customMetadata !== undefined
      ? parseCustomMetadata('copy', mergeCustomMetadata(source.customMetadata, customMetadata))
      : customMetadata,
    storageClass
  })

  // The store's copy first (no look beforehand: one round trip for the common case); a source whose bytes must be read refuses it.
  const build: CopyBuilder = source => {
    // Bytes under a customer key are deciphered and (re-)encrypted, never shared; and their key is judged before the
    // source's conditions (below), so a source refused by its conditions never shows its digests to a caller without it.
    if (source.checksums.ssec !== undefined || sourceSsecKey !== undefined || ssecKey !== undefined) throw rewriteNeeded
    if (judgeRecord(sourceConditional, source) !== 'pass') return null
    if (needsBytes(source, algorithm)) throw rewriteNeeded
    return copyOf(source)
  }
  const outcome = await store.copy(fromId, toId, build, destination, { now: fresh.now }).catch((err: unknown) => { if (err === rewriteNeeded) return null; throw err })
  if (outcome !== null) {
    switch (outcome.status) {
      case 'copied': return { status: 'copied', object: new ObjectMetadata(outcome.object) }
      case 'no-source': return { status: 'not-found' }
      case 'source-refused': return { status: 'source-precondition-failed', source: new ObjectMetadata(outcome.source) }
      case 'refused': return { status: 'precondition-failed' }
    }
  }

  // The bytes are read from the source as it was when opened, and written again.
  const opened = await store.open(fromId)
  if (opened === null) return { status: 'not-found' }
  const reader = await readerWithKey('copy', opened, sourceSsecKey)
  const source = reader.object
  // A refusal, or a failure, before the bytes are read closes the source.
  let refusal: BucketCopyOutcome | undefined
  try {
    if (judgeRecord(sourceConditional, source) !== 'pass') refusal = { status: 'source-precondition-failed', source: new ObjectMetadata(source) }
    else if (!unconditional && !destination(await store.head(toId))) refusal = { status: 'precondition-failed' }
    // A source larger than a copy may be (a multipart object) is refused now, not once that many of its bytes were written.
    else if (source.size > MAX_COPY_BYTES) throw new BucketError('EntityTooLarge', 'copy')
  } catch (err) {
    await reader.close()
    throw err
  }
  if (refusal !== undefined) {
    await reader.close()
    return refusal
  }
  const held = reader.bytes
  if (held !== undefined) await reader.close()
  const bytes = held !== undefined ? Readable.from([held]) : reader.stream(0, source.size)
  const body = new MeasuredBody(bytes, copiedAlgorithms(source, algorithm), MAX_COPY_BYTES, 'copy')
  const ssec = ssecKey === undefined ? undefined : newSsecRecord(ssecKey)
  const sealed = ssecKey === undefined || ssec === undefined ? undefined : new SealedBody(body, ssecKey, ssec.salt)
  let staged: StagedBody
  try {
    staged = await store.stage(sealed ?? body, fresh.version)
  } catch (err) {
    // A store that failed before reading all of it leaves the source's files open otherwise.
    bytes.destroy()
    throw err
  }
  const { md5, ...others } = await body.digests()
  // A copy is a new body: encrypted under the copy's key, if any, with a layout of one part (ssec.ts).
  const checksums = sealed === undefined ? { md5, ...others } : Object.assign({ ssec }, others)
  const record = withFields(copyOf(source), { size: body.size, etag: sealed === undefined ? md5 as string : sealed.etag(), checksums })
  // Its event is the copy's, naming its source, though its bytes were written anew.
  if (!await store.commit(toId, record, staged, destination, { copiedFrom: { key: source.key }, now: fresh.now })) return { status: 'precondition-failed' }
  return { status: 'copied', object: new ObjectMetadata(record) }
}
