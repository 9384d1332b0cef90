/**
 * The hosted service's own S3 extensions, beside S3's operations:
 *
 * - `cf-create-bucket-if-missing: true` on PutObject and
 *   CreateMultipartUpload: a bucket that does not exist is created (by the
 *   registry, as CreateBucket creates one, so a bad name is
 *   InvalidBucketName) before the write; the caller must be allowed to
 *   create buckets (`bucket:write`) for that.
 * - `x-amz-metadata-directive: MERGE` on CopyObject: the source's metadata
 *   with the request's laid over it, key by key (see objects.ts).
 * - ListBuckets' `cf-prefix`, `cf-start-after`, `cf-max-keys` and
 *   `cf-continuation-token` request headers (see buckets.ts).
 *
 * Other `cf-` headers are ignored, as other unknown headers are.
 */
import { isBucketError, requireAccess, type Bucket, type BucketInfo } from '../bucket/index.js'
import { refuseReservedName } from './buckets.js'
import { openNamedBucket, type S3Context } from './context.js'
import { single } from './headers.js'

/** True when the request asks for its bucket to be created if missing (the header's value is `true`, any case). */
export function createBucketIfMissing (ctx: S3Context): boolean {
  return single(ctx.request.headers, 'cf-create-bucket-if-missing')?.trim().toLowerCase() === 'true'
}

/**
 * The bucket the request names, created first when it is missing and the
 * request carries `cf-create-bucket-if-missing: true`; NoSuchBucket otherwise.
 */
export async function openBucketForUpload (ctx: S3Context): Promise<{ bucket: Bucket, info: BucketInfo }> {
  if (!createBucketIfMissing(ctx) || await ctx.registry.info(ctx.bucketName) !== null) return await openNamedBucket(ctx)
  if (ctx.principal !== null) requireAccess(ctx.principal, 'bucket:write', ctx.bucketName, undefined, 'CreateBucket')
  refuseReservedName(ctx.bucketName)
  try {
    await ctx.registry.create(ctx.bucketName)
  } catch (err) {
    // Another request created it in between: the write goes on into that one.
    if (!isBucketError(err) || err.errorName !== 'BucketAlreadyExists') throw err
  }
  return await openNamedBucket(ctx)
}
