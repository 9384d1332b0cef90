/**
 * `fsbucket serve` starts the S3 listener beside the gateway, in every
 * worker process, over the same data directory; its start-up line says
 * where it listens and prints the development key pair on loopback.
 */
import t from 'tap'
import { spawn } from 'node:child_process'
import http from 'node:http'
import { createInterface } from 'node:readline'
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { testdir } from '../testdir.js'
import { bin, freePort } from '../server/serve-process.js'

t.test('serve --workers 2 --s3-port N: the S3 API and the HTTP routes share the objects', async t => {
  const dataDir = testdir(t)
  const port = await freePort()
  const s3Port = await freePort()
  const server = spawn(process.execPath, [bin, 'serve', '--data', dataDir, '--port', String(port), '--s3-port', String(s3Port), '--workers', '2', '--fsync', 'off', '--route', 'site.localhost=default'], {
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const exited = new Promise<number | null>(resolve => server.once('exit', code => resolve(code)))
  t.teardown(() => { if (server.exitCode === null) server.kill('SIGKILL') })
  const note = await new Promise<Record<string, string>>((resolve, reject) => {
    const lines = createInterface({ input: server.stdout! })
    lines.on('line', line => {
      const entry = JSON.parse(line) as Record<string, string>
      if (typeof entry.msg === 'string' && entry.msg.startsWith('S3 API') && entry.endpoint !== undefined) resolve(entry)
    })
    setTimeout(() => reject(new Error('no S3 start-up line within 60 s')), 60_000).unref()
  })
  t.equal(note.endpoint, `http://127.0.0.1:${s3Port}`)
  t.equal(note.accessKeyId, 'fsbucket-dev')
  t.equal(note.secretAccessKey, 'fsbucket-dev-secret')

  const s3 = new S3Client({ endpoint: note.endpoint, region: 'auto', forcePathStyle: true, credentials: { accessKeyId: note.accessKeyId, secretAccessKey: note.secretAccessKey } })
  const put = await s3.send(new PutObjectCommand({ Bucket: 'default', Key: 'hello.txt', Body: 'through S3' }))
  const read = await fetch(`http://127.0.0.1:${port}/default/hello.txt`)
  t.equal(await read.text(), 'through S3')
  t.equal(read.headers.get('etag'), put.ETag)
  const got = await s3.send(new GetObjectCommand({ Bucket: 'default', Key: 'hello.txt' }))
  t.equal(await got.Body!.transformToString(), 'through S3')
  // The gateway's route host is a public site's name, not one of the S3 port's, even under localhost.
  const status = await new Promise<number>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: s3Port, path: '/default/hello.txt', headers: { host: `site.localhost:${s3Port}` } }, res => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject)
  })
  t.equal(status, 403, 'a route host is refused on the open S3 port')

  s3.destroy()
  server.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM stops both listeners and exits 0')
})
