/**
 * The HTTP routes serve an object encrypted with a customer-provided key
 * (SSE-C) only to a request carrying S3's key headers: without them 400
 * (10910), with another key 403 (10911), with malformed ones 400 (40003);
 * never the ciphertext.
 */
import t from 'tap'
import { createHash } from 'node:crypto'
import { auth, gateway } from './gateway-fixture.js'

const KEY = Buffer.alloc(32, 0x5a)
const keyHeaders = (key: Buffer, md5 = createHash('md5').update(key).digest('base64')): Record<string, string> => ({
  'x-amz-server-side-encryption-customer-algorithm': 'AES256',
  'x-amz-server-side-encryption-customer-key': key.toString('base64'),
  'x-amz-server-side-encryption-customer-key-md5': md5
})

t.test('GET and HEAD of an SSE-C object need its key in headers', async t => {
  const { app, registry } = await gateway(t)
  const bucket = await registry.open('photos')
  await bucket?.put('sealed.txt', 'the plaintext', { ssecKey: KEY })

  const bare = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: auth })
  t.equal(bare.statusCode, 400, 'without the key: 400')
  t.equal(bare.json().errors[0].code, 10910, 'SsecKeyRequired')
  t.notMatch(bare.body, 'plaintext', 'no data in the answer')
  t.equal((await app.inject({ method: 'HEAD', url: '/photos/sealed.txt', headers: auth })).statusCode, 400, 'HEAD without the key: 400')
  const wrong = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(Buffer.alloc(32, 1)) } })
  t.equal(wrong.statusCode, 403, 'with another key: 403')
  t.equal(wrong.json().errors[0].code, 10911, 'SsecKeyMismatch')
  const malformed = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(KEY, 'AAAAAAAAAAAAAAAAAAAAAA==') } })
  t.equal(malformed.statusCode, 400, 'a key whose MD5 does not match: 400')
  t.equal(malformed.json().errors[0].code, 40003, 'InvalidHeader')

  const served = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(KEY) } })
  t.equal(served.statusCode, 200, 'with the key: 200')
  t.equal(served.body, 'the plaintext', 'the data')
  const ranged = await app.inject({ method: 'GET', url: '/photos/sealed.txt', headers: { ...auth, ...keyHeaders(KEY), range: 'bytes=4-8' } })
  t.equal(ranged.body, 'plain', 'a range of it')
})
