/**
 * A test suite's process as a user writes one, run by embed.test.ts: it
 * loads `startServer` from the package's entry (package.json's `main`, what
 * `import 'fsbucket'` loads), tries a port that is taken, starts an
 * in-memory server, uses every door that stores something (S3 put and
 * multipart, HTTP put, form upload and delete, the management API, the
 * console page), closes it, and prints one JSON line of what it saw
 * (with how many signal listeners the process had after the import and
 * after the close). It never calls process.exit: the parent checks that it
 * ends by itself.
 */
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { constants } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  CompleteMultipartUploadCommand, CreateMultipartUploadCommand, GetObjectCommand, PutObjectCommand, S3Client, UploadPartCommand
} from '@aws-sdk/client-s3'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const main = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string }).main
/** Listeners on every signal the system knows (SIGINT, SIGTERM, SIGHUP, ...). */
const signalListeners = (): number => Object.keys(constants.signals).reduce((sum, signal) => sum + process.listenerCount(signal), 0)
const { startServer } = await import(pathToFileURL(path.join(root, main)).href) as typeof import('../../src/index.js')

const importedWith = signalListeners()

const seen: Record<string, unknown> = {}

// A port that is taken: a clear refusal, and nothing left open by the attempt.
const taken = createServer()
await new Promise<void>(resolve => taken.listen(0, '127.0.0.1', resolve))
const takenPort = (taken.address() as { port: number }).port
seen.conflict = await startServer({ memory: true, s3Port: takenPort }).then(
  async server => { await server.close(); return 'started' },
  (err: Error) => err.message)
await new Promise(resolve => taken.close(resolve))

const server = await startServer({ memory: true })
const s3 = new S3Client({ endpoint: server.s3.endpoint, region: server.s3.region, credentials: server.s3, forcePathStyle: true })
await s3.send(new PutObjectCommand({ Bucket: 'default', Key: 'via-s3.txt', Body: 'from S3' }))
const upload = await s3.send(new CreateMultipartUploadCommand({ Bucket: 'default', Key: 'parts.bin' }))
const part = await s3.send(new UploadPartCommand({ Bucket: 'default', Key: 'parts.bin', UploadId: upload.UploadId, PartNumber: 1, Body: 'one part' }))
await s3.send(new CompleteMultipartUploadCommand({ Bucket: 'default', Key: 'parts.bin', UploadId: upload.UploadId, MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] } }))
seen.multipart = await (await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'parts.bin' }))).Body?.transformToString()

seen.put = (await fetch(`${server.url}/default/via-http.txt`, { method: 'PUT', body: 'from HTTP' })).status
const form = new FormData()
form.append('file', new Blob(['a form file']), 'form.txt')
seen.form = (await fetch(`${server.url}/default`, { method: 'POST', body: form })).status
seen.read = await (await fetch(`${server.url}/default/via-s3.txt`)).text()
seen.deleted = (await fetch(`${server.url}/default/via-http.txt`, { method: 'DELETE' })).status
// Open on loopback without credentials configured: any well-formed token is taken.
const api = { authorization: 'Bearer local' }
const accounts = await (await fetch(`${server.url}/client/v4/accounts`, { headers: api })).json() as { result: Array<{ id: string }> }
seen.bucket = (await fetch(`${server.url}/client/v4/accounts/${accounts.result[0].id}/r2/buckets`, {
  method: 'POST', headers: { ...api, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'made-by-api' })
})).status
seen.console = (await fetch(`${server.url}/_console/`)).status

s3.destroy()
await server.close()
seen.closedAt = Date.now()
seen.signalListeners = { imported: importedWith, closed: signalListeners() }
console.log(JSON.stringify(seen))
