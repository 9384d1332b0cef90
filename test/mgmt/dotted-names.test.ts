/**
 * Bucket names with dots: the hosted service allows lowercase letters,
 * digits and hyphens only (3 to 63, a letter or digit at each end), so a
 * name S3 would take, such as `www.example.com`, is refused alike by the
 * management API, the S3 port and the command line's registry, and the
 * HTTP routes find no bucket by it.
 */
import t from 'tap'
import { CreateBucketCommand } from '@aws-sdk/client-s3'
import { accountId, buildApp, call } from './helpers.js'
import { rejection, s3Server } from '../s3/fixture.js'
import { gateway, auth } from '../http/gateway-fixture.js'

const dotted = ['my.bucket', 'www.example.com', 'a.b', 'logs.2026']

t.test('the management API refuses a dotted bucket name with 10005', async t => {
  const { app, registry } = await buildApp(t)
  for (const name of dotted) {
    const answer = await call(app, 'POST', `/accounts/${accountId}/r2/buckets`, { name })
    t.same([answer.status, answer.body.errors[0]?.code], [400, 10005], name)
    t.equal(await registry.info(name), null, `${name}: nothing made`)
  }
})

t.test('S3 CreateBucket refuses a dotted bucket name with InvalidBucketName', async t => {
  const { client, registry } = await s3Server(t)
  const s3 = client()
  for (const name of dotted) {
    const refused = await rejection(s3.send(new CreateBucketCommand({ Bucket: name })))
    t.same([refused.name, refused.$metadata.httpStatusCode], ['InvalidBucketName', 400], name)
    t.equal(await registry.info(name), null, `${name}: nothing made`)
  }
})

t.test('the registry refuses one, and the HTTP routes name no bucket by it', async t => {
  const { app, registry } = await gateway(t)
  for (const name of dotted) {
    await t.rejects(registry.create(name), { code: 10005 }, name)
    const put = await app.inject({ method: 'PUT', url: `/${name}/k`, headers: auth, payload: 'x' })
    t.equal(put.statusCode, 404, `PUT /${name}/k`)
    t.equal((put.json() as { errors: Array<{ code: number }> }).errors[0].code, 10006, 'no such bucket')
  }
})
