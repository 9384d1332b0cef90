/**
 * Moving bytes: uploads (a file, or a stream of unknown length such as
 * stdin), downloads and bucket-to-bucket copies, over any transport.
 *
 * Memory stays flat whatever the size. A file larger than the part size
 * goes up as a multipart upload whose parts are read from the file with
 * their own ranged streams, `parallel` at a time, each checked against the
 * size planned (a file that changes meanwhile fails, and nothing is
 * stored); a download streams into a temporary file renamed over the
 * destination once complete (local-files.ts).
 * A stream of unknown length is cut into parts in memory, so it holds at most
 * `parallel + 1` parts. A copy between buckets streams each part from a
 * ranged read into its part upload.
 *
 * Parts are all of one size but the last, as the store requires; the size
 * grows past `--part-size` when an object would otherwise need more than
 * 10,000 parts. A failed multipart upload is aborted before the error is
 * reported, and so is every upload in progress when the command is
 * interrupted (SIGINT, SIGTERM: exit 130 or 143; stopping.ts), so none
 * leaves parts behind for the sweeper.
 */
import { Readable, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { MAX_PART_NUMBER } from '../bucket/index.js'
import { readPlanned, writeLocal } from './local-files.js'
import { counted, countedFrom, type Tracker } from './progress.js'
import { CliError } from './errors.js'
import { isStopping, undoIfStopped } from './stopping.js'
import type { ObjectTransport, PartUpload, RemoteObject, UploadedPart, WriteMetadata } from './transport.js'

export interface Tuning {
  /** Objects larger than this go up in parts of this size. */
  partSize: number
  /** Parts in flight at once. */
  parallel: number
}

const MiB = 1024 * 1024

/** The part size for an object of `size` bytes: the chosen one, or larger to stay within 10,000 parts. */
export function partSizeFor (size: number, tuning: Tuning): number {
  const needed = Math.ceil(size / MAX_PART_NUMBER)
  return needed <= tuning.partSize ? tuning.partSize : Math.ceil(needed / MiB) * MiB
}

/** Runs `work(0..count-1)`, `parallel` at a time; the first failure stops new work and is thrown once all in flight settle. */
async function inPool<T> (count: number, parallel: number, work: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count)
  let next = 0
  let failure: { err: unknown } | null = null
  const worker = async (): Promise<void> => {
    while (failure === null && next < count) {
      const index = next++
      try {
        results[index] = await work(index)
      } catch (err) {
        failure ??= { err }
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker))
  if (failure !== null) throw (failure as { err: unknown }).err
  return results
}

/** Sends one part of the upload; the body is the part's bytes. */
type SendPart = (partNumber: number, body: Readable, size: number) => Promise<UploadedPart>

/** What a part or an upload fails with once the command is stopping: never reported (runCommand is quiet then). */
function stoppedError (): CliError {
  return new CliError('the command is stopping')
}

/**
 * A multipart upload from creation to completion: `send` sends the parts
 * through the function it is given, then the upload is completed, or
 * aborted when a part or the completion failed.
 *
 * When the command stops (stopping.ts) the upload is aborted too, and no
 * part of it starts any more. Its undo is registered before the upload is
 * asked for, so an upload whose creation is in flight at the stop is aborted
 * once the store answers; and the undo first cuts the bodies of the parts in
 * flight and waits for those parts to fail, so that the store removes what
 * it had received of them and no part lands after the abort.
 */
async function multipartUpload (
  transport: ObjectTransport, bucket: string, key: string, metadata: WriteMetadata,
  send: (sendPart: SendPart) => Promise<UploadedPart[]>
): Promise<RemoteObject> {
  if (isStopping()) throw stoppedError()
  const creating = transport.createUpload(bucket, key, metadata)
  const inFlight = new Set<{ body: Readable, sent: Promise<UploadedPart> }>()
  const release = undoIfStopped('upload', async () => {
    for (const part of inFlight) part.body.destroy()
    await Promise.allSettled([...inFlight].map(async part => await part.sent))
    await (await creating).abort()
  })
  let upload: PartUpload
  try {
    upload = await creating
  } catch (err) {
    release()
    throw err
  }
  const sendPart: SendPart = async (partNumber, body, size) => {
    if (isStopping()) {
      body.destroy()
      throw stoppedError()
    }
    const part = { body, sent: upload.uploadPart(partNumber, body, size) }
    inFlight.add(part)
    try {
      return await part.sent
    } finally {
      inFlight.delete(part)
    }
  }
  try {
    const parts = await send(sendPart)
    if (isStopping()) throw stoppedError()
    return await upload.complete(parts.sort((a, b) => a.partNumber - b.partNumber))
  } catch (err) {
    // The command gives up on this upload: its parts must not wait for the sweeper. (Stopping, the undo aborts it, once its parts settle.)
    if (!isStopping()) await upload.abort().catch(() => {})
    throw err
  } finally {
    release()
  }
}

export async function uploadFile (
  transport: ObjectTransport, bucket: string, key: string, file: string, size: number,
  metadata: WriteMetadata, tuning: Tuning, tracker: Tracker
): Promise<RemoteObject> {
  const partSize = partSizeFor(size, tuning)
  if (size <= partSize) {
    const body = countedFrom(readPlanned(file, size), tracker)
    return await transport.put(bucket, key, body, size, metadata)
  }
  const count = Math.ceil(size / partSize)
  return await multipartUpload(transport, bucket, key, metadata, async sendPart => await inPool(count, tuning.parallel, async index => {
    const start = index * partSize
    const length = Math.min(partSize, size - start)
    const body = countedFrom(readPlanned(file, size, { start, length }), tracker)
    return await sendPart(index + 1, body, length)
  }))
}

/**
 * Cuts a stream into buffers of `size` bytes (the last may be shorter; an
 * empty stream gives one empty buffer), each filled as the chunks come: a
 * buffer from `spare` (one the caller is done with) or a new one.
 */
async function * partsOf (source: AsyncIterable<Buffer>, size: number, spare: Buffer[] = []): AsyncGenerator<Buffer> {
  let part: Buffer | undefined
  let held = 0
  let yielded = false
  for await (const chunk of source) {
    let rest = chunk
    while (rest.length > 0) {
      part ??= spare.pop() ?? Buffer.allocUnsafeSlow(size)
      const copied = rest.copy(part, held)
      held += copied
      rest = rest.subarray(copied)
      if (held === size) {
        yield part
        yielded = true
        part = undefined
        held = 0
      }
    }
  }
  if (held > 0 || !yielded) yield part === undefined ? Buffer.alloc(0) : part.subarray(0, held)
}

/** Uploads a stream of unknown length: one put when it fits in one part, else a multipart upload. */
export async function uploadStream (
  transport: ObjectTransport, bucket: string, key: string, source: Readable,
  metadata: WriteMetadata, tuning: Tuning, tracker: Tracker
): Promise<RemoteObject> {
  // Buffers of parts sent, filled again with later parts: the memory held stays that of the first few parts.
  const spare: Buffer[] = []
  const parts = partsOf(countedFrom(source, tracker), tuning.partSize, spare)
  const first = await parts.next()
  const firstPart = first.done === true ? Buffer.alloc(0) : first.value
  const second = firstPart.length < tuning.partSize ? { done: true as const, value: undefined } : await parts.next()
  if (second.done === true) {
    return await transport.put(bucket, key, Readable.from([firstPart]), firstPart.length, metadata)
  }
  const pending: Buffer[] = [firstPart, second.value]
  let partNumber = 0
  let failed = false
  const nextBuffer = async (): Promise<Buffer | undefined> => {
    if (pending.length > 0) return pending.shift()
    const read = await parts.next()
    return read.done === true ? undefined : read.value
  }
  // Workers take the next part in turn: reads of the stream are serialised through `taking`.
  let taking: Promise<unknown> = Promise.resolve()
  const take = async (): Promise<{ buffer: Buffer, partNumber: number } | null> => {
    const turn = taking.then(async () => {
      const buffer = failed ? undefined : await nextBuffer()
      return buffer === undefined ? null : { buffer, partNumber: ++partNumber }
    })
    taking = turn.catch(() => {})
    return await turn
  }
  return await multipartUpload(transport, bucket, key, metadata, async sendPart => {
    const done: UploadedPart[] = []
    await Promise.all(Array.from({ length: tuning.parallel }, async () => {
      try {
        for (let part = await take(); part !== null; part = await take()) {
          done.push(await sendPart(part.partNumber, Readable.from([part.buffer]), part.buffer.length))
          if (part.buffer.length === tuning.partSize) spare.push(part.buffer)
        }
      } catch (err) {
        failed = true // the other workers stop taking parts
        throw err
      }
    }))
    return done
  })
}

/** Streams an object into `file` through a temporary file renamed over it at the end (`root`: see writeLocal). */
export async function downloadToFile (
  transport: ObjectTransport, bucket: string, key: string, file: string, tracker: Tracker, root?: string
): Promise<void> {
  const { body } = await transport.get(bucket, key)
  await writeLocal(file, body, counted(tracker), root)
}

/** Streams an object to a stream (stdout), which is left open. */
export async function downloadToStream (
  transport: ObjectTransport, bucket: string, key: string, out: Writable, tracker: Tracker
): Promise<void> {
  const { body } = await transport.get(bucket, key)
  await pipeline(body, counted(tracker), out, { end: false })
}

/** Copies a stored object to another key (of any bucket), in ranged parts when it is large. */
export async function copyObject (
  transport: ObjectTransport, source: { bucket: string, object: RemoteObject }, bucket: string, key: string,
  metadata: WriteMetadata, tuning: Tuning, tracker: Tracker
): Promise<RemoteObject> {
  const size = source.object.size
  const partSize = partSizeFor(size, tuning)
  if (size <= partSize) {
    const { body } = await transport.get(source.bucket, source.object.key)
    return await transport.put(bucket, key, countedFrom(body, tracker), size, metadata)
  }
  const count = Math.ceil(size / partSize)
  return await multipartUpload(transport, bucket, key, metadata, async sendPart => await inPool(count, tuning.parallel, async index => {
    const offset = index * partSize
    const length = Math.min(partSize, size - offset)
    const { body } = await transport.get(source.bucket, source.object.key, { offset, length })
    return await sendPart(index + 1, countedFrom(body, tracker), length)
  }))
}
