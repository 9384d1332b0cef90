/**
 * A child process for the multi-process test: opens the bucket directory
 * given as argument and carries out the parent's commands, sent over IPC.
 * A command may carry `at`, a wall-clock instant to wait for, so that the
 * children of one round start their writes together. Its first reply names
 * the SQLite driver it runs.
 */
import { openBucket, type BucketUploadedPart } from '../../../../src/index.js'
import { sqliteDriver } from '../../../../src/stores/fs/sqlite.js'
import { md5Hex, payload } from './payload.js'

export interface RacerCommand {
  id: number
  op: 'createOnly' | 'ifMatch' | 'plain' | 'put' | 'get' | 'delete' | 'create' | 'part' | 'complete' | 'exit'
  key: string
  label?: string
  size?: number
  etag?: string
  at?: number
  uploadId?: string
  partNumber?: number
  parts?: BucketUploadedPart[]
}

export interface RacerReply {
  id: number
  won?: boolean
  etag?: string | null
  bytesMd5?: string
  writer?: string
  uploadId?: string
  part?: BucketUploadedPart
  error?: { message: string, code?: number }
  /** The SQLite driver this child runs (in its first reply). */
  driver?: string
}

const [dir, minPartSize] = process.argv.slice(2)
if (dir === undefined) throw new Error('usage: racer <bucket dir> [minPartSize]')
const bucket = await openBucket(dir, { minPartSize: Number(minPartSize ?? 5 * 1024 * 1024) })

async function carryOut (command: RacerCommand): Promise<Omit<RacerReply, 'id'>> {
  if (command.at !== undefined) await new Promise(resolve => setTimeout(resolve, Math.max(0, (command.at as number) - Date.now())))
  const body = (): Buffer => payload(command.label ?? 'unnamed', command.size ?? 0)
  const customMetadata = { writer: command.label ?? '' }
  switch (command.op) {
    case 'createOnly': {
      const put = await bucket.put(command.key, body(), { customMetadata, onlyIf: { etagDoesNotMatch: '*' } })
      return { won: put !== null, etag: put?.etag ?? null }
    }
    case 'ifMatch': {
      const put = await bucket.put(command.key, body(), { customMetadata, onlyIf: { etagMatches: command.etag } })
      return { won: put !== null, etag: put?.etag ?? null }
    }
    case 'plain':
    case 'put': {
      const put = await bucket.put(command.key, body(), { customMetadata })
      return { etag: put?.etag ?? null }
    }
    case 'get': {
      const got = await bucket.get(command.key)
      if (got === null) return { etag: null }
      if (!('body' in got)) throw new Error('get without a body')
      return { etag: got.etag, bytesMd5: md5Hex(new Uint8Array(await got.arrayBuffer())), writer: got.customMetadata.writer }
    }
    case 'delete':
      await bucket.delete(command.key)
      return {}
    case 'create':
      return { uploadId: (await bucket.createMultipartUpload(command.key, { customMetadata })).uploadId }
    case 'part': {
      const upload = bucket.resumeMultipartUpload(command.key, command.uploadId ?? '')
      return { part: await upload.uploadPart(command.partNumber ?? 1, body()) }
    }
    case 'complete': {
      const upload = bucket.resumeMultipartUpload(command.key, command.uploadId ?? '')
      return { etag: (await upload.complete(command.parts ?? [])).etag }
    }
    case 'exit':
      await bucket.close()
      return {}
  }
}

process.on('message', (command: RacerCommand) => {
  carryOut(command).then(
    reply => process.send?.({ id: command.id, ...reply }, () => { if (command.op === 'exit') process.disconnect?.() }),
    (err: Error & { code?: number }) => process.send?.({ id: command.id, error: { message: err.message, code: err.code } })
  )
})
process.send?.({ id: 0, driver: sqliteDriver().name })
