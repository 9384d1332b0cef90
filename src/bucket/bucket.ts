import type { Readable } from 'node:stream'
import type { Bucket, BucketObjectBody, OpenBucketOptions } from './types.js'

export async function openBucket (_dir: string, _options: OpenBucketOptions = {}): Promise<Bucket> {
  throw new Error('openBucket: not implemented yet')
}

/** The body of a read as a Node.js stream, for doors that pipe it to a socket. */
export function bodyStream (_body: BucketObjectBody): Readable {
  throw new Error('bodyStream: not implemented yet')
}
