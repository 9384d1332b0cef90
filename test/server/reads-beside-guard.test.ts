/**
 * Reads answered beside Fastify (src/doors/reads-beside.ts) on a whole
 * server in development mode (no token, loopback): the site guard, the
 * public routes and the custom domains decide a read's Host on both ports
 * exactly as for a read that goes through the routes. Each read is sent
 * plain and with an empty query (`/b/k?`, always the routes') and the two
 * answers compared.
 */
import { request as httpRequest } from 'node:http'
import t from 'tap'
import { buildGateway, type GatewayOptions } from '../../src/server/gateway.js'
import { serveDefaults } from '../../src/server/defaults.js'

const options: GatewayOptions = {
  data: '',
  memory: true,
  host: '127.0.0.1',
  port: 0,
  s3Port: 0,
  public: [],
  route: ['site.localhost=site', '/pub/=site'],
  fsync: false,
  logLevel: 'silent',
  sweepInterval: 0,
  defaultBucket: 'photos',
  idleTimeout: serveDefaults.idleTimeout,
  s3Domain: ['s3.example.test']
}

interface Answer { status: number, type: unknown, body: string }

async function get (port: number, path: string, host: string): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        // S3's request ids are random.
        const body = Buffer.concat(chunks).toString().replace(/<RequestId>[0-9A-F]{16}<\/RequestId>/, '')
        resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('in development mode, a read\'s Host is judged the same beside Fastify as through the routes', async t => {
  const gateway = await buildGateway(options, true)
  t.teardown(async () => { await gateway.close() })
  const { port, s3Port } = await gateway.listen()
  const { registry } = gateway
  await registry.create('site', { public: true })
  await registry.create('blog')
  await registry.updateSettings('blog', { domains: ['blog.example'] })
  await (await registry.open('photos'))?.put('k', 'private photo')
  await (await registry.open('site'))?.put('photos/k', 'a page of the site')
  await (await registry.open('blog'))?.put('photos/k', 'a post')
  const hosts = ['127.0.0.1', 'localhost', 'photos.localhost', 'evil.example', 'site.localhost', 'blog.example', 'photos.s3.example.test', '10.0.0.1']
  const seen: Record<string, number> = {}
  for (const [door, at] of [['http', port], ['s3', s3Port ?? 0]] as const) {
    for (const host of hosts) {
      // Paths that do not decode are the routes' to refuse, a public route's prefix included.
      for (const path of ['/photos/k', '/k', '/photos/%zz', '/pub/%zz', '/pub/photos/k']) {
        const plain = await get(at, path, `${host}:${at}`)
        const routed = await get(at, `${path}?`, `${host}:${at}`)
        t.same(plain, routed, `${door} ${host} ${path}: ${plain.status}`)
        seen[`${door} ${host} ${path}`] = plain.status
      }
    }
  }
  // What the routes answer, for the record: the guard still refuses foreign and public hosts.
  t.equal(seen['http 127.0.0.1 /photos/k'], 200)
  t.equal(seen['http evil.example /photos/k'], 421, 'a foreign Host is refused')
  t.equal(seen['s3 127.0.0.1 /photos/k'], 200)
  t.equal(seen['s3 evil.example /photos/k'], 403, 'a foreign Host is refused on the S3 port')
  t.equal(seen['s3 site.localhost /photos/k'], 403, 'a route host is not the S3 port\'s')
  t.equal(seen['s3 blog.example /photos/k'], 403, 'a custom domain is not the S3 port\'s')
  t.equal(seen['s3 photos.s3.example.test /k'], 200, 'the port\'s own virtual host')
  t.equal(seen['http 127.0.0.1 /photos/%zz'], 400, 'a path that does not decode')
  t.equal(seen['http 127.0.0.1 /pub/%zz'], 400)
  t.equal(seen['http 127.0.0.1 /pub/photos/k'], 200, 'a public route of the site bucket')
})
