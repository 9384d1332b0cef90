import t from 'tap'
import { devSigner, presignedPath, raw, s3Server } from './fixture.js'

t.test('presigned X-Amz-Expires: 0 has expired (403 AccessDenied); negative and over a week are malformed (400), as S3 answers them', async t => {
  const server = await s3Server(t)
  await (await server.registry.open('photos'))!.put('k', 'x')
  const status = async (expiresIn: number): Promise<[number, string]> => {
    // The SDK's signer will not make a URL of more than a week: one of 60 seconds is edited (its signature then fails, after the range check).
    const path = expiresIn > 604_800
      ? (await presignedPath(server, 'GET', '/photos/k', { expiresIn: 60 })).replace('X-Amz-Expires=60', `X-Amz-Expires=${expiresIn}`)
      : await presignedPath(server, 'GET', '/photos/k', { expiresIn })
    const answer = await raw(server, 'GET', path)
    return [answer.status, /<Code>([^<]*)</.exec(answer.body)?.[1] ?? '']
  }
  t.same(await status(60), [200, ''])
  t.same(await status(0), [403, 'AccessDenied'])
  t.same(await status(-1), [400, 'AuthorizationQueryParametersError'])
  t.same(await status(604_800), [200, ''], 'seven days is the most')
  t.same(await status(604_801), [400, 'AuthorizationQueryParametersError'])
})

t.test('a header-signed request dated more than 15 minutes from the server\'s clock is 403 RequestTimeTooSkewed', async t => {
  const server = await s3Server(t)
  const headers = async (signingDate: Date): Promise<Record<string, string>> => {
    const signed = await devSigner().sign({
      method: 'GET', protocol: 'http:', hostname: '127.0.0.1', port: server.port, path: '/photos', query: {},
      headers: { host: `127.0.0.1:${server.port}`, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }
    }, { signingDate })
    return signed.headers as Record<string, string>
  }
  t.equal((await raw(server, 'GET', '/photos', await headers(new Date()))).status, 200)
  for (const minutes of [-16, 16, -24 * 60]) {
    const answer = await raw(server, 'GET', '/photos', await headers(new Date(Date.now() + minutes * 60_000)))
    t.equal(answer.status, 403, `${minutes} minutes`)
    t.match(answer.body, '<Code>RequestTimeTooSkewed</Code>')
  }
})
