/**
 * One streaming run in a process of its own, for the peak-RSS rows of the
 * library benchmark: a fresh process has no heap left over from other
 * measurements, and the kernel's high-water mark (`maxRSS`) catches peaks
 * that a sampling timer would miss.
 *
 *   node dist/scripts/bench/stream-rss.js <mode> <path> <bytes>
 *
 * Modes: `bucket-put` (put a generated stream as key "stream" of the bucket
 * in <path>), `bucket-get` (get it into a discarding sink), `fs-write` (the
 * baseline: pipe the same generated stream into the file <path> and fsync)
 * and `fs-read` (pipe that file into the sink). Prints one JSON line:
 * `{ maxRssBytes, sampledPeakBytes, seconds, bytes }`.
 */
import { createReadStream, createWriteStream, promises as fsp } from 'node:fs'
import { pipeline } from 'node:stream/promises'
import { bodyStream, openBucket, type BucketObjectBody } from '../../src/index.js'
import { discardingSink, generatedBytes, KiB } from './generated-bytes.js'

type Mode = 'bucket-put' | 'bucket-get' | 'fs-write' | 'fs-read'

async function run (mode: Mode, target: string, total: number): Promise<number> {
  switch (mode) {
    case 'bucket-put': {
      const bucket = await openBucket(target)
      try {
        const object = await bucket.put('stream', generatedBytes(total))
        if (object?.size !== total) throw new Error(`put stored ${String(object?.size)} bytes, not ${total}`)
        return object.size
      } finally {
        await bucket.close()
      }
    }
    case 'bucket-get': {
      const bucket = await openBucket(target)
      try {
        const object = await bucket.get('stream')
        if (object === null || !('body' in object)) throw new Error('the streamed object is missing')
        const sink = discardingSink()
        await pipeline(bodyStream(object as BucketObjectBody), sink)
        return sink.bytes
      } finally {
        await bucket.close()
      }
    }
    case 'fs-write': {
      const file = createWriteStream(target)
      await pipeline(generatedBytes(total), file)
      const handle = await fsp.open(target, 'r+')
      await handle.sync()
      await handle.close()
      return total
    }
    case 'fs-read': {
      const sink = discardingSink()
      // The same read size as the store's reads, so the baseline is not handicapped.
      await pipeline(createReadStream(target, { highWaterMark: 512 * KiB }), sink)
      return sink.bytes
    }
  }
}

const [mode, target, bytesArg] = process.argv.slice(2)
if (!['bucket-put', 'bucket-get', 'fs-write', 'fs-read'].includes(mode) || target === undefined || bytesArg === undefined) {
  process.stderr.write('usage: stream-rss.js bucket-put|bucket-get|fs-write|fs-read <path> <bytes>\n')
  process.exit(2)
}
let sampledPeakBytes = process.memoryUsage.rss()
const sampler = setInterval(() => { sampledPeakBytes = Math.max(sampledPeakBytes, process.memoryUsage.rss()) }, 10)
const started = performance.now()
const bytes = await run(mode as Mode, target, Number(bytesArg))
const seconds = (performance.now() - started) / 1000
clearInterval(sampler)
const maxRssBytes = process.resourceUsage().maxRSS * KiB // Linux reports kilobytes
process.stdout.write(JSON.stringify({ maxRssBytes, sampledPeakBytes, seconds, bytes }) + '\n')
