// The `minio` npm package against the S3 port, as
// test/clients/languages.clients.ts runs it:
// `node minio-js.mjs <path of minio's entry> <host:port> <bucket>` with
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set (the package is installed
// beside the project, so it is imported by path). It puts a small object with
// metadata and a 12 MiB stream of unknown length (a multipart upload), stats,
// reads whole and by range, copies, lists (v2 and v1), reads and writes
// through presigned URLs, deletes in bulk, makes and removes a bucket, and
// prints what it saw.
import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { pathToFileURL } from 'node:url'

const [entry, hostPort, bucket] = process.argv.slice(2)
const loaded = await import(pathToFileURL(entry).href)
const Minio = loaded.Client === undefined ? loaded.default : loaded
const [host, port] = hostPort.split(':')
const c = new Minio.Client({
  endPoint: host, port: Number(port), useSSL: false, pathStyle: true, region: 'us-east-1',
  accessKey: process.env.AWS_ACCESS_KEY_ID, secretKey: process.env.AWS_SECRET_ACCESS_KEY
})
const sha = data => createHash('sha256').update(data).digest('hex')
const bytesOf = async stream => { const chunks = []; for await (const chunk of stream) chunks.push(chunk); return Buffer.concat(chunks) }

await c.putObject(bucket, 'mjs/small.txt', 'hello minio js', 14, { 'Content-Type': 'text/plain', 'X-Amz-Meta-From': 'minio-js' })
const big = randomBytes(12 * 1024 * 1024)
const put = await c.putObject(bucket, 'mjs/big.bin', Readable.from([big]))
console.log(`big etag: ${put.etag}`)
const stat = await c.statObject(bucket, 'mjs/small.txt')
console.log(`stat: ${stat.size} ${stat.metaData['content-type']} ${stat.metaData.from}`)
console.log(`big same: ${sha(await bytesOf(await c.getObject(bucket, 'mjs/big.bin'))) === sha(big)}`)
console.log(`partial: ${(await bytesOf(await c.getPartialObject(bucket, 'mjs/small.txt', 6, 5))).toString()}`)
await c.copyObject(bucket, 'mjs/copy.txt', `/${bucket}/mjs/small.txt`)
const listed = []
for await (const o of c.listObjectsV2(bucket, 'mjs/', true)) listed.push(`${o.name}:${o.size}`)
console.log(`listed: ${listed.join(' ')}`)
let v1 = 0
for await (const _ of c.listObjects(bucket, 'mjs/', true)) v1++
console.log(`listed v1: ${v1}`)
console.log(`presigned get: ${await (await fetch(await c.presignedGetObject(bucket, 'mjs/small.txt', 60))).text()}`)
console.log(`presigned put: ${(await fetch(await c.presignedPutObject(bucket, 'mjs/presigned.txt', 60), { method: 'PUT', body: 'via url' })).status}`)
await c.removeObjects(bucket, ['mjs/small.txt', 'mjs/big.bin', 'mjs/copy.txt', 'mjs/presigned.txt'])
let left = 0
for await (const _ of c.listObjectsV2(bucket, 'mjs/', true)) left++
console.log(`left: ${left}`)
await c.makeBucket('minio-js-made')
await c.removeBucket('minio-js-made')
console.log('OK')
