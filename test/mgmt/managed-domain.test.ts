/** Public access through the management API's managed-domain switch: read, turn on and off, bad bodies, missing bucket. */
import t from 'tap'
import { accountId, buildApp, call } from './helpers.js'

const buckets = `/accounts/${accountId}/r2/buckets`

t.test('domains/managed reads and switches a bucket\'s public access', async t => {
  const { app, registry } = await buildApp(t)
  await registry.create('photos')
  const off = await call(app, 'GET', `${buckets}/photos/domains/managed`)
  t.equal(off.status, 200)
  t.match(off.body.result, { bucketId: /^[0-9a-f]{32}$/, domain: `pub-${String(off.body.result.bucketId)}.r2.dev`, enabled: false })

  const on = await call(app, 'PUT', `${buckets}/photos/domains/managed`, { enabled: true })
  t.equal(on.body.result.enabled, true)
  t.equal((await registry.info('photos'))?.settings.public, true, 'the gateway serves it publicly')
  t.equal((await call(app, 'GET', `${buckets}/photos/domains/managed`)).body.result.bucketId, off.body.result.bucketId, 'a stable id')

  await call(app, 'PUT', `${buckets}/photos/domains/managed`, { enabled: false })
  t.equal((await registry.info('photos'))?.settings.public, false)

  for (const body of [{}, { enabled: 'yes' }, { enabled: 1 }]) {
    const bad = await call(app, 'PUT', `${buckets}/photos/domains/managed`, body)
    t.equal(bad.status, 400, JSON.stringify(body))
    t.equal(bad.body.errors[0].code, 10040)
  }
  t.equal((await call(app, 'GET', `${buckets}/nope/domains/managed`)).body.errors[0].code, 10006)
  t.equal((await call(app, 'PUT', `${buckets}/nope/domains/managed`, { enabled: true })).status, 404)
})

t.test('a bucket public for the run (serve --public) reads as enabled, and is not turned off through the API', async t => {
  const { app, registry } = await buildApp(t, { publicBuckets: new Set(['site']) })
  await registry.create('site')
  const read = await call(app, 'GET', `${buckets}/site/domains/managed`)
  t.equal(read.body.result.enabled, true, 'anyone may read it: enabled, though its settings say private')
  const off = await call(app, 'PUT', `${buckets}/site/domains/managed`, { enabled: false })
  t.equal(off.status, 400)
  t.equal(off.body.errors[0].code, 10040)
  t.match(off.body.errors[0].message, /public for this run \(serve --public\), whatever its setting: restart the server without that flag/)
  t.equal((await registry.info('site'))?.settings.public, false, 'nothing stored')
  const on = await call(app, 'PUT', `${buckets}/site/domains/managed`, { enabled: true })
  t.equal(on.body.result.enabled, true, 'turning it on stores it, for the runs without the flag')
  t.equal((await registry.info('site'))?.settings.public, true)
})
