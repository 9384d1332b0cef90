/**
 * ListParts answers each part's LastModified (when that part was uploaded),
 * and UploadPartCopy's CopyPartResult the copied part's, not its source's;
 * a part stored before parts kept their time lists with its upload's
 * initiation time.
 */
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import {
  CreateMultipartUploadCommand, ListMultipartUploadsCommand, ListObjectsV2Command, ListPartsCommand, PutObjectCommand, UploadPartCommand, UploadPartCopyCommand
} from '@aws-sdk/client-s3'
import { Database } from '../../src/stores/fs/sqlite.js'
import { s3Server } from './fixture.js'

/** Waits until the clock has moved past `instant` (a millisecond or two), so times taken after it are later. */
async function pastInstant (instant: number): Promise<void> {
  while (Date.now() <= instant) await sleep(1)
}

t.test('ListParts gives each part the time it was uploaded, in upload order', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'timed' }))
  const started = Date.now()
  const uploadedAt: Record<number, [number, number]> = {}
  for (const PartNumber of [2, 1, 3]) {
    const before = Date.now()
    await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'timed', UploadId, PartNumber, Body: `part-${PartNumber}` }))
    uploadedAt[PartNumber] = [before, Date.now()]
    await pastInstant(Date.now())
  }
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'timed', UploadId }))
  const times = listed.Parts?.map(p => p.LastModified) ?? []
  t.same(listed.Parts?.map(p => p.PartNumber), [1, 2, 3])
  t.ok(times.every(time => time instanceof Date), 'every Part has a LastModified the SDK reads as a date')
  for (const [i, n] of [1, 2, 3].entries()) {
    const time = times[i]!.getTime()
    t.ok(time >= uploadedAt[n][0] && time <= uploadedAt[n][1], `part ${n} was uploaded within its request (${times[i]!.toISOString()})`)
  }
  t.ok(times[1]!.getTime() < times[0]!.getTime() && times[0]!.getTime() < times[2]!.getTime(), 'in upload order: 2, then 1, then 3')
  t.ok(times[1]!.getTime() >= started)

  const before = Date.now()
  await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'timed', UploadId, PartNumber: 2, Body: 'part-2 again' }))
  const again = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'timed', UploadId }))
  t.ok(again.Parts![1].LastModified!.getTime() >= before, 'a part uploaded again has the later time')
  t.same(again.Parts?.map(p => p.LastModified?.getTime()).filter((_, i) => i !== 1), [times[0], times[2]].map(d => d!.getTime()), 'the others keep theirs')
})

t.test('the raw answer: LastModified after PartNumber, ISO 8601 with milliseconds', async t => {
  const { client, endpoint } = await s3Server(t)
  const s3 = client()
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'raw' }))
  await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'raw', UploadId, PartNumber: 1, Body: 'hello' }))
  const xml = await (await fetch(`${endpoint}/photos/raw?uploadId=${encodeURIComponent(UploadId!)}`)).text()
  t.match(xml, /<Part><PartNumber>1<\/PartNumber><LastModified>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z<\/LastModified><ETag>/)
})

t.test('UploadPartCopy answers the copied part\'s time, as ListParts lists it, not its source\'s', async t => {
  const { client } = await s3Server(t)
  const s3 = client()
  await s3.send(new PutObjectCommand({ Bucket: 'photos', Key: 'source', Body: 'abcdefghijklmnopqrstuvwxyz' }))
  const source = (await s3.send(new ListObjectsV2Command({ Bucket: 'photos' }))).Contents![0].LastModified!
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'joined' }))
  await pastInstant(source.getTime())
  const before = Date.now()
  const copied = await s3.send(new UploadPartCopyCommand({ Bucket: 'photos', Key: 'joined', UploadId, PartNumber: 1, CopySource: 'photos/source', CopySourceRange: 'bytes=0-4' }))
  const after = Date.now()
  const time = copied.CopyPartResult?.LastModified
  t.ok(time instanceof Date)
  t.ok(time!.getTime() >= before && time!.getTime() <= after, `the time of the copy (${time?.toISOString()}), not the source's (${source.toISOString()})`)
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'joined', UploadId }))
  t.equal(listed.Parts?.[0].LastModified?.getTime(), time!.getTime(), 'the time ListParts lists')
})

t.test('a part stored before parts kept their time lists with its upload\'s initiation time', async t => {
  const { client, dataDir } = await s3Server(t)
  const s3 = client()
  const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'photos', Key: 'old' }))
  await s3.send(new UploadPartCommand({ Bucket: 'photos', Key: 'old', UploadId, PartNumber: 1, Body: 'old part' }))
  // As an older fsbucket left the row (a catalog opened since gained the column, NULL in its rows).
  const db = new Database(path.join(dataDir, 'photos', '.fsbucket', 'catalog.db'))
  t.equal(db.prepare('UPDATE parts SET uploaded = NULL').run().changes, 1)
  db.close()
  const initiated = (await s3.send(new ListMultipartUploadsCommand({ Bucket: 'photos' }))).Uploads?.[0].Initiated
  const listed = await s3.send(new ListPartsCommand({ Bucket: 'photos', Key: 'old', UploadId }))
  t.same(listed.Parts?.map(p => [p.PartNumber, p.Size]), [[1, 8]], 'the part still lists')
  t.equal(listed.Parts?.[0].LastModified?.getTime(), initiated?.getTime(), 'with the upload\'s initiation time')
})
