/**
 * The HTTP routes' writes take S3's SSE-C headers as their reads do: a PUT,
 * an upload created, its parts and its completion under a key store
 * ciphertext that only that key reads; malformed headers are 40003 before
 * anything is stored; a part of an SSE-C upload without its key is 10910
 * and with another 10911; a completion's key, when sent, is judged as a
 * part's. A listed SSE-C object carries no checksum value (a list takes no
 * key). And a completion judges the request's conditional headers (412, the
 * upload kept, the object in place untouched).
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import type { LightMyRequestResponse } from 'fastify'
import { auth, gateway } from './gateway-fixture.js'

const KEY = Buffer.alloc(32, 0x3c)
const OTHER = Buffer.alloc(32, 0x11)
const MARKER = 'PLAINTEXT-OF-THE-ROUTES-9Z'
const keyHeaders = (key: Buffer, md5 = createHash('md5').update(key).digest('base64')): Record<string, string> => ({
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': key.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': md5
})
const json = { 'content-type': 'application/json' }

function errorCode (res: LightMyRequestResponse): number {
  return res.json().errors[0].code
}

/** Whether `text` is in any file under `dir`. */
function foundOnDisk (dir: string, text: string): boolean {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map(name => path.join(dir, name))
    .some(file => statSync(file).isFile() && readFileSync(file).includes(text))
}

t.test('a PUT with SSE-C headers stores ciphertext only that key reads', async t => {
  const { app, registry, dataDir } = await gateway(t)
  const put = await app.inject({ method: 'PUT', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(KEY) }, payload: MARKER })
  t.equal(put.statusCode, 200)
  t.equal(put.json().result.ssecKeyMd5, createHash('md5').update(KEY).digest('hex'), 'the answer reports the key\'s MD5')
  t.notOk(foundOnDisk(dataDir, MARKER), 'no plaintext in the data directory')
  const bare = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: auth })
  t.equal(bare.statusCode, 400, 'a read without the key is refused')
  t.equal(errorCode(bare), 10910)
  const read = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(KEY) } })
  t.equal(read.body, MARKER, 'the key reads the data')
  const bucket = await registry.open('photos')
  t.equal((await bucket?.head('sealed.txt'))?.ssecKeyMd5, createHash('md5').update(KEY).digest('hex'), 'the binding sees an SSE-C object')

  for (const [what, headers] of [
    ['a key whose MD5 does not match', keyHeaders(KEY, 'AAAAAAAAAAAAAAAAAAAAAA==')],
    ['an algorithm other than AES256', { ...keyHeaders(KEY), 'x-amz-server-side-encryption-customer-algorithm': 'AES128' }],
    ['a key without its MD5', { 'x-amz-server-side-encryption-customer-algorithm': 'AES256', 'x-amz-server-side-encryption-customer-key': KEY.toString('base64') }]
  ] as const) {
    const refused = await app.inject({ method: 'PUT', url: '/photos/refused.txt', headers: { ...auth, ...headers }, payload: MARKER })
    t.equal(refused.statusCode, 400, `${what}: 400`)
    t.equal(errorCode(refused), 40003, `${what}: InvalidHeader, as a read answers`)
  }
  t.equal(await bucket?.head('refused.txt'), null, 'nothing stored in the clear')
})

t.test('a multipart upload with SSE-C headers: created, parts and completion under the key', async t => {
  const { app, dataDir } = await gateway(t)
  const create = await app.inject({ method: 'POST', url: '/photos/big.bin?action=mpu-create', headers: { ...auth, ...keyHeaders(KEY) } })
  t.equal(create.statusCode, 200)
  const uploadId = encodeURIComponent(create.json().result.uploadId)
  const partUrl = (n: number): string => `/photos/big.bin?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=${n}`

  const bare = await app.inject({ method: 'PUT', url: partUrl(1), headers: auth, payload: MARKER })
  t.equal(bare.statusCode, 400, 'a part without the upload\'s key is refused')
  t.equal(errorCode(bare), 10910, 'SsecKeyRequired, as the engine refuses it')
  const wrong = await app.inject({ method: 'PUT', url: partUrl(1), headers: { ...auth, ...keyHeaders(OTHER) }, payload: MARKER })
  t.equal(wrong.statusCode, 403, 'a part under another key: 403')
  t.equal(errorCode(wrong), 10911)
  const malformed = await app.inject({ method: 'PUT', url: partUrl(1), headers: { ...auth, ...keyHeaders(KEY, 'AAAAAAAAAAAAAAAAAAAAAA==') }, payload: MARKER })
  t.equal(errorCode(malformed), 40003, 'malformed headers on a part: 40003')

  const one = await app.inject({ method: 'PUT', url: partUrl(1), headers: { ...auth, ...keyHeaders(KEY) }, payload: `${MARKER}-1` })
  const two = await app.inject({ method: 'PUT', url: partUrl(2), headers: { ...auth, ...keyHeaders(KEY) }, payload: `${MARKER}-2` })
  t.equal(one.statusCode, 200)
  t.equal(two.statusCode, 200)
  const parts = JSON.stringify({ parts: [one.json().result, two.json().result] })
  const completeUrl = `/photos/big.bin?action=mpu-complete&uploadId=${uploadId}`
  const other = await app.inject({ method: 'POST', url: completeUrl, headers: { ...auth, ...json, ...keyHeaders(OTHER) }, payload: parts })
  t.equal(other.statusCode, 403, 'a completion sending another key: 403')
  t.equal(errorCode(other), 10911)
  const done = await app.inject({ method: 'POST', url: completeUrl, headers: { ...auth, ...json, ...keyHeaders(KEY) }, payload: parts })
  t.equal(done.statusCode, 200, 'a completion with the key')
  t.notOk(foundOnDisk(dataDir, MARKER), 'no plaintext in the data directory')
  t.equal((await app.inject({ method: 'GET', url: '/photos/big.bin', headers: auth })).statusCode, 400, 'the object needs its key')
  t.equal((await app.inject({ method: 'GET', url: '/photos/big.bin', headers: { ...auth, ...keyHeaders(KEY) } })).body, `${MARKER}-1${MARKER}-2`)

  const plain = await app.inject({ method: 'POST', url: '/photos/plain.bin?action=mpu-create', headers: auth })
  const plainId = encodeURIComponent(plain.json().result.uploadId)
  const keyed = await app.inject({ method: 'PUT', url: `/photos/plain.bin?action=mpu-uploadpart&uploadId=${plainId}&partNumber=1`, headers: { ...auth, ...keyHeaders(KEY) }, payload: MARKER })
  t.equal(keyed.statusCode, 400, 'a key for a part of an upload created without one: 400')
  t.equal(errorCode(keyed), 10912, 'SsecNotApplicable')
  const part = await app.inject({ method: 'PUT', url: `/photos/plain.bin?action=mpu-uploadpart&uploadId=${plainId}&partNumber=1`, headers: auth, payload: 'plain' })
  const keyedCompletion = await app.inject({ method: 'POST', url: `/photos/plain.bin?action=mpu-complete&uploadId=${plainId}`, headers: { ...auth, ...json, ...keyHeaders(KEY) }, payload: JSON.stringify({ parts: [part.json().result] }) })
  t.equal(keyedCompletion.statusCode, 400, 'a key sent to complete an upload created without one is refused, not ignored')
  t.equal(errorCode(keyedCompletion), 10912)
})

t.test('a listed SSE-C object carries no checksum value', async t => {
  const { app, registry } = await gateway(t)
  const sha256 = createHash('sha256').update(MARKER).digest('hex')
  const md5 = createHash('md5').update(MARKER).digest('base64')
  t.equal((await app.inject({ method: 'PUT', url: '/photos/sealed', headers: { ...auth, ...keyHeaders(KEY), 'x-checksum-sha256': sha256 }, payload: MARKER })).statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/sealed-md5', headers: { ...auth, ...keyHeaders(KEY), 'content-md5': md5 }, payload: MARKER })).statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/plain', headers: { ...auth, 'x-checksum-sha256': sha256 }, payload: MARKER })).statusCode, 200)
  const listed = (await app.inject({ method: 'GET', url: '/photos', headers: auth })).json().result
  t.same(listed.find((o: { key: string }) => o.key === 'sealed').checksums, {}, 'the routes\' list: none of the SSE-C object')
  t.same(listed.find((o: { key: string }) => o.key === 'sealed-md5').checksums, {}, 'not the MD5 given either')
  t.equal(listed.find((o: { key: string }) => o.key === 'plain').checksums.sha256, sha256, 'a plain object\'s as before')
  const bucket = await registry.open('photos')
  const page = await bucket?.list()
  t.same(page?.objects.find(o => o.key === 'sealed')?.checksums.toJSON(), {}, 'the binding\'s list: none')
  t.equal(page?.objects.find(o => o.key === 'sealed-md5')?.checksums.md5, undefined, 'the binding\'s list: no MD5')
  t.equal((await bucket?.head('sealed-md5'))?.checksums.md5, undefined, 'nor its head')
  const head = await bucket?.head('sealed')
  t.same(head?.checksums.toJSON(), {}, 'the binding\'s head, which takes no key: none')
  t.equal(head?.checksums.md5, undefined, 'no MD5 either')
  const read = await app.inject({ method: 'HEAD', url: '/photos/sealed', headers: { ...auth, ...keyHeaders(KEY) } })
  t.equal(read.headers['x-checksum-sha256'], sha256, 'a read with the key shows them')
})

t.test('a completion judges If-None-Match and If-Match: 412, the upload kept, the object untouched', async t => {
  const { app } = await gateway(t)
  t.equal((await app.inject({ method: 'PUT', url: '/photos/kept', headers: auth, payload: 'the original' })).statusCode, 200)
  const create = await app.inject({ method: 'POST', url: '/photos/kept?action=mpu-create', headers: auth })
  const uploadId = encodeURIComponent(create.json().result.uploadId)
  const part = await app.inject({ method: 'PUT', url: `/photos/kept?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=1`, headers: auth, payload: 'the replacement' })
  const complete = async (headers: Record<string, string>): Promise<LightMyRequestResponse> => await app.inject({
    method: 'POST', url: `/photos/kept?action=mpu-complete&uploadId=${uploadId}`, headers: { ...auth, ...json, ...headers }, payload: JSON.stringify({ parts: [part.json().result] })
  })
  for (const headers of [{ 'if-none-match': '*' }, { 'if-match': '"not-its-etag"' }] as Array<Record<string, string>>) {
    const refused = await complete(headers)
    t.equal(refused.statusCode, 412, `${JSON.stringify(headers)}: 412`)
    t.equal(errorCode(refused), 41200, 'PreconditionFailed, as a PUT answers')
    t.equal((await app.inject({ method: 'GET', url: '/photos/kept', headers: auth })).body, 'the original', 'the object in place is untouched')
  }
  const done = await complete({ 'if-match': (await app.inject({ method: 'HEAD', url: '/photos/kept', headers: auth })).headers.etag as string })
  t.equal(done.statusCode, 200, 'a condition that holds completes the upload kept by the refusals')
  t.equal((await app.inject({ method: 'GET', url: '/photos/kept', headers: auth })).body, 'the replacement')
})

t.test('a form upload with SSE-C headers stores each file under the key; malformed headers store nothing', async t => {
  const { app, registry, dataDir } = await gateway(t)
  const form = (name: string): string => `--zz\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${MARKER}\r\n--zz--\r\n`
  const headers = { ...auth, 'content-type': 'multipart/form-data; boundary=zz' }
  const posted = await app.inject({ method: 'POST', url: '/photos', headers: { ...headers, ...keyHeaders(KEY) }, payload: form('form.txt') })
  t.equal(posted.statusCode, 200)
  t.notOk(foundOnDisk(dataDir, MARKER), 'no plaintext in the data directory')
  t.equal(errorCode(await app.inject({ method: 'GET', url: '/photos/form.txt', headers: auth })), 10910, 'the file needs the key')
  t.equal((await app.inject({ method: 'GET', url: '/photos/form.txt', headers: { ...auth, ...keyHeaders(KEY) } })).body, MARKER, 'and reads with it')
  const refused = await app.inject({ method: 'POST', url: '/photos', headers: { ...headers, ...keyHeaders(KEY, 'AAAAAAAAAAAAAAAAAAAAAA==') }, payload: form('bad.txt') })
  t.same([refused.statusCode, errorCode(refused)], [400, 40003], 'a malformed key: InvalidHeader')
  t.equal(await (await registry.open('photos'))?.head('bad.txt'), null, 'nothing stored')
})
