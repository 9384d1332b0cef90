/**
 * The S3 port in development mode (unsigned requests accepted) refuses
 * cross-site writes and foreign Host names, as the gateway does, in S3's XML.
 */
import t from 'tap'
import { openRegistry } from '../../src/index.js'
import { buildS3App, s3AccessPolicy } from '../../src/s3/index.js'
import { guardS3Site } from '../../src/server/s3-guard.js'
import { testdir } from '../testdir.js'

t.test('cross-site writes and foreign hosts are refused on an open S3 port', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  const policy = s3AccessPolicy(null, null, true)
  t.ok(policy.anonymousWrites, 'development mode')
  const s3 = await buildS3App({ registry, policy, domains: ['s3.example.test'], logLevel: false })
  guardS3Site(s3, { routeHosts: new Set(), domains: ['s3.example.test'], registry })
  t.teardown(async () => { await s3.close(); await registry.close() })

  const put = await s3.inject({ method: 'PUT', url: '/photos/keep', headers: { host: '127.0.0.1:8788' }, payload: 'precious' })
  t.equal(put.statusCode, 200, 'a program (no Origin) may write unsigned')

  const deleteBody = '<Delete><Object><Key>keep</Key></Object></Delete>'
  const crossSite = await s3.inject({ method: 'POST', url: '/photos?delete', headers: { host: '127.0.0.1:8788', origin: 'https://evil.example', 'content-type': 'text/plain' }, payload: deleteBody })
  t.equal(crossSite.statusCode, 403)
  t.match(crossSite.body, /<Code>AccessDenied<\/Code>/)
  t.match(crossSite.body, `<RequestId>${String(crossSite.headers['x-amz-request-id'])}</RequestId>`, 'with the request id of its header')
  const fetchSite = await s3.inject({ method: 'DELETE', url: '/photos/keep', headers: { host: 'localhost:8788', 'sec-fetch-site': 'cross-site' } })
  t.equal(fetchSite.statusCode, 403)
  const rebound = await s3.inject({ method: 'GET', url: '/photos/keep', headers: { host: 'evil.example:8788' } })
  t.equal(rebound.statusCode, 403, 'a rebound host name')
  t.match(rebound.body, /evil\.example/, 'the message names it')
  t.notMatch(rebound.body, /<Message>[^<]*<script/, 'escaped')
  const escaped = await s3.inject({ method: 'GET', url: '/photos/keep', headers: { host: 'a<b>.example' } })
  t.notMatch(escaped.body, /a<b>/, 'a Host with markup is escaped')

  const get = await s3.inject({ method: 'GET', url: '/photos/keep', headers: { host: '127.0.0.1:8788' } })
  t.equal(get.body, 'precious', 'the object survived')
  for (const host of ['photos.localhost:8788', 'photos.s3.example.test', 's3.example.test']) {
    const res = await s3.inject({ method: 'GET', url: host.startsWith('photos.') ? '/keep' : '/photos/keep', headers: { host } })
    t.equal(res.statusCode, 200, `${host} is the server's own`)
  }
  const ownDomain = await s3.inject({ method: 'PUT', url: '/other', headers: { host: 'photos.s3.example.test', origin: 'http://photos.s3.example.test' }, payload: 'v' })
  t.equal(ownDomain.statusCode, 200, 'the virtual-host domains are the server\'s own, for writes too')
  const sameOrigin = await s3.inject({ method: 'DELETE', url: '/photos/keep', headers: { host: '127.0.0.1:8788', origin: 'http://127.0.0.1:8788' } })
  t.equal(sameOrigin.statusCode, 204, 'same origin may write')
})

t.test('an open S3 port answers no read to a page of another site, whatever the bucket\'s CORS rules', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET'] }] })
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: false })
  guardS3Site(s3, { routeHosts: new Set(['site.localhost']), domains: [], registry })
  t.teardown(async () => { await s3.close(); await registry.close() })
  await s3.inject({ method: 'PUT', url: '/photos/secret', headers: { host: '127.0.0.1:8788' }, payload: 'private bytes' })
  for (const origin of ['https://evil.example', 'null']) {
    const res = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: '127.0.0.1:8788', origin } })
    t.equal(res.statusCode, 403, origin)
    t.match(res.body, /<Code>AccessDenied<\/Code>/)
    t.notMatch(res.body, /private bytes/)
  }
  // A gateway's route host under localhost serves a public site: its pages are not the user's.
  const site = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: '127.0.0.1:8788', origin: 'http://site.localhost:8787' } })
  t.equal(site.statusCode, 403, 'a page of a route host')
  t.notMatch(site.body, /private bytes/)
  const rebound = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: 'site.localhost:8788' } })
  t.equal(rebound.statusCode, 403, 'nor is a route host one of this port\'s names')
  t.notMatch(rebound.body, /private bytes/)
  const local = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: '127.0.0.1:8788', origin: 'http://localhost:3000' } })
  t.equal(local.body, 'private bytes', 'a local development page may read')
  t.equal(local.headers['access-control-allow-origin'], '*')
})

t.test('an open S3 port takes the gateway\'s custom domains for public sites, even under localhost or its own domains', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos', { cors: [{ allowedOrigins: ['*'], allowedMethods: ['GET', 'PUT'] }] })
  await registry.create('blog')
  await registry.create('site', { public: true, domains: ['blog.localhost', 'www.s3.example.test', 'files.example'] })
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: ['s3.example.test'], logLevel: false })
  guardS3Site(s3, { routeHosts: new Set(), domains: ['s3.example.test'], registry })
  t.teardown(async () => { await s3.close(); await registry.close() })
  await s3.inject({ method: 'PUT', url: '/photos/secret', headers: { host: '127.0.0.1:8788' }, payload: 'private bytes' })
  // The gateway serves the site's HTML untouched on that name: its pages are a public site's, not the user's.
  for (const origin of ['http://blog.localhost:8787', 'http://www.s3.example.test']) {
    const res = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: '127.0.0.1:8788', origin } })
    t.equal(res.statusCode, 403, origin)
    t.notMatch(res.body, /private bytes/)
  }
  for (const name of ['blog.localhost:8788', 'www.s3.example.test', 'files.example']) {
    const read = await s3.inject({ method: 'GET', url: '/photos/secret', headers: { host: name } })
    t.equal(read.statusCode, 403, `${name} is not one of this port's names`)
    t.match(read.body, /<Code>AccessDenied<\/Code>/)
    const write = await s3.inject({ method: 'PUT', url: '/planted', headers: { host: name }, payload: 'x' })
    t.equal(write.statusCode, 403, `${name}: no write`)
  }
  t.equal((await (await registry.open('blog'))!.list()).objects.length, 0, 'nothing planted')
  const local = await s3.inject({ method: 'GET', url: '/secret', headers: { host: 'photos.localhost:8788', origin: 'http://localhost:3000' } })
  t.equal(local.body, 'private bytes', 'other names under localhost keep the port\'s rights')
})

t.test('--s3-domain given with a trailing dot or a port: its sub-domains are the open port\'s own names, as the router reads them', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  const domains = ['S3.Example.test.', 's3b.example.test:8788']
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains, logLevel: false })
  guardS3Site(s3, { routeHosts: new Set(), domains, registry })
  t.teardown(async () => { await s3.close(); await registry.close() })
  for (const host of ['photos.s3.example.test', 'photos.s3b.example.test:8788', 'photos.s3b.example.test.']) {
    const put = await s3.inject({ method: 'PUT', url: '/k', headers: { host }, payload: host })
    t.equal(put.statusCode, 200, `${host} writes`)
    const get = await s3.inject({ method: 'GET', url: '/k', headers: { host } })
    t.equal(get.body, host, `${host} reads its bucket`)
  }
  const other = await s3.inject({ method: 'GET', url: '/k', headers: { host: 'photos.example.test' } })
  t.equal(other.statusCode, 403, 'a parent of the domain is not one of them')
})

t.test('the open S3 port\'s refusals speak of the S3 port: its names, its key pair; a route host is just not one of its names', async t => {
  const registry = await openRegistry(testdir(t), { fsync: false })
  await registry.create('photos')
  const s3 = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: false })
  guardS3Site(s3, { routeHosts: new Set(['site.localhost']), domains: [], registry })
  t.teardown(async () => { await s3.close(); await registry.close() })
  const message = (body: string): string => /<Message>([^<]*)<\/Message>/.exec(body)?.[1] ?? ''
  const foreign = await s3.inject({ method: 'GET', url: '/photos/k', headers: { host: 'evil.example' } })
  t.match(message(foreign.body), /^This S3 port has no credentials configured .*--s3-domain.* Host &quot;evil\.example&quot; is not one of them\.$/)
  for (const method of ['GET', 'PUT'] as const) {
    const routeHost = await s3.inject({ method, url: '/photos/k', headers: { host: 'site.localhost' }, payload: method === 'PUT' ? 'x' : undefined })
    t.equal(routeHost.statusCode, 403, `${method} on a route host`)
    t.match(message(routeHost.body), /^This S3 port .* Host &quot;site\.localhost&quot; is not one of them\.$/, 'not the gateway\'s "serves its public routes only"')
  }
  const write = await s3.inject({ method: 'PUT', url: '/photos/k', headers: { host: '127.0.0.1:8788', origin: 'http://localhost:3000' }, payload: 'x' })
  t.match(message(write.body), /^This S3 port .*--s3-access-key-id.* The Origin is not this server&apos;s own\.$/)
  const read = await s3.inject({ method: 'GET', url: '/photos/k', headers: { host: '127.0.0.1:8788', origin: 'https://evil.example' } })
  t.match(message(read.body), /^This S3 port .*local pages only\. Origin https:\/\/evil\.example\.$/)
})
