/**
 * The S3 origin share links name: the rule (a table), and its wiring from
 * the server's options (`--s3-endpoint`, the S3 port it listened on, no S3
 * port) to the management API's share-links route.
 */
import t, { type Test } from 'tap'
import { buildGateway, type GatewayOptions } from '../../src/server/gateway.js'
import { serveDefaults } from '../../src/server/defaults.js'
import { shareEndpointOf } from '../../src/server/share-endpoint.js'

t.test('shareEndpointOf: the configured origin, else the request\'s host with the S3 port', async t => {
  const at = (configured: string | undefined, port: number | null, host: string | undefined, listen = '127.0.0.1'): string | null =>
    shareEndpointOf({ configured, scheme: 'http', s3Port: () => port, host: listen, domains: ['localhost', 's3.example.test'] })(host)?.origin ?? null
  t.equal(at(undefined, 8788, 'files.example.test:8787'), 'http://files.example.test:8788')
  t.equal(at(undefined, 8788, '[::1]:8787'), 'http://[::1]:8788')
  t.equal(at(undefined, 8788, undefined, '0.0.0.0'), 'http://127.0.0.1:8788', 'no Host: the listening address, reached on loopback')
  t.equal(at(undefined, 8788, 'a/b@c', '::'), 'http://[::1]:8788', 'a Host that is no host name is not used')
  t.equal(at('https://s3.example.test', 8788, 'files.example.test:8787'), 'https://s3.example.test')
  t.equal(at('https://s3.example.test', null, 'x'), null, 'no S3 port: no link, whatever is configured')
  t.equal(at(undefined, null, 'x'), null)
  // A name the S3 port reads as a bucket's virtual host would make the link's path a key of that bucket: the domain itself.
  t.equal(at(undefined, 8788, 'bkt1.localhost:8787'), 'http://localhost:8788', 'a console reached on <bucket>.localhost')
  t.equal(at(undefined, 8788, 'BKT1.LOCALHOST.:8787'), 'http://localhost:8788', 'in any case, with a final dot')
  t.equal(at(undefined, 8788, 'files.s3.example.test'), 'http://s3.example.test:8788', 'a sub-domain of an --s3-domain')
  t.equal(at(undefined, 8788, 'localhost:8787'), 'http://localhost:8788', 'the domain itself is path style already')
})

const options: GatewayOptions = {
  data: '',
  memory: true,
  host: '127.0.0.1',
  port: 0,
  s3Port: 0,
  token: 'share-endpoint-admin-token',
  public: [],
  route: [],
  fsync: false,
  logLevel: 'silent',
  sweepInterval: 0,
  defaultBucket: 'photos',
  idleTimeout: serveDefaults.idleTimeout,
  s3Domain: []
}

/** The origin of a share link made on a gateway built from `options`, or the error code it answers. */
async function linkOrigin (t: Test, changes: Partial<GatewayOptions>): Promise<{ origin: string | number, s3Port: number | null }> {
  const gateway = await buildGateway(Object.assign({}, options, changes), true)
  t.teardown(async () => { await gateway.close() })
  const bound = await gateway.listen()
  const answer = await gateway.app.inject({
    method: 'POST',
    url: '/client/v4/accounts/local/r2/buckets/photos/share-links',
    headers: { authorization: `Bearer ${options.token ?? ''}`, host: 'files.example.test:8787' },
    payload: { key: 'a.txt' }
  })
  const body = answer.json()
  return { origin: answer.statusCode === 200 ? new URL(body.result.url).origin : body.errors[0].code, s3Port: bound.s3Port }
}

t.test('the server names its S3 port, by the request\'s host or as --s3-endpoint says', async t => {
  const listened = await linkOrigin(t, {})
  t.equal(listened.origin, `http://files.example.test:${listened.s3Port ?? 0}`, 'the port the S3 listener got (asked for 0)')
  t.equal((await linkOrigin(t, { s3Endpoint: 'https://s3.example.test' })).origin, 'https://s3.example.test')
  t.equal((await linkOrigin(t, { s3Port: null, s3Endpoint: 'https://s3.example.test' })).origin, 10952, 'no S3 port: no link')
})
