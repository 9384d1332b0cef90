/** Opens a bucket of the binding on a directory: the engine over the filesystem store. */
import { FsStore } from '../persist/fs-store.js'
import { BucketEngine } from './bucket.js'
import type { Bucket, OpenBucketOptions } from './types.js'

/** Opens the bucket stored in `dir`, creating the directory when missing. */
export async function openBucket (dir: string, options: OpenBucketOptions = {}): Promise<Bucket> {
  const store = await FsStore.open(dir, { fsync: options.fsync })
  return new BucketEngine(store, options)
}
