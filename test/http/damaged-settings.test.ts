/**
 * A bucket whose settings file is damaged, as the doors answer it: the
 * bucket lists (`GET /`, the management API's) leave it out and list the
 * others, and every request naming it answers 500 with the catalogue's
 * 10915 (SettingsDamaged), never the generic 10001 nor a TypeError; a
 * field of the wrong type is ignored, its default served. The file and
 * what is wrong with it go to the registry's `warn` (here, with none
 * given, a process warning), once per version of the file.
 */
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { auth, gateway } from './gateway-fixture.js'

t.test('one damaged bucket: the lists hold the others, its requests answer 10915', async t => {
  const { app, dataDir } = await gateway(t)
  const warnings: string[] = []
  const onWarning = (warning: Error): void => { if (warning.name === 'FsbucketWarning') warnings.push(warning.message) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const file = path.join(dataDir, 'photos', '.fsbucket', 'settings.json')
  await writeFile(file, '')
  const listed = await app.inject({ method: 'GET', url: '/', headers: auth })
  t.equal(listed.statusCode, 200, 'GET / answers')
  t.same(listed.json().result.map((b: { name: string }) => b.name), ['site'], 'and lists the other bucket')
  const accounts = await app.inject({ method: 'GET', url: '/client/v4/accounts', headers: auth })
  t.equal(accounts.statusCode, 200, 'the management API names its account')
  const id: string = accounts.json().result[0].id
  const mgmt = await app.inject({ method: 'GET', url: `/client/v4/accounts/${id}/r2/buckets`, headers: auth })
  t.equal(mgmt.statusCode, 200, 'the management API lists')
  t.same(mgmt.json().result.buckets.map((b: { name: string }) => b.name), ['site'])
  const read = await app.inject({ method: 'GET', url: '/photos/a.txt', headers: auth })
  t.same([read.statusCode, read.json().errors[0].code], [500, 10915], 'a request naming it answers 10915')
  t.match(read.body, /settings are damaged/)
  t.notMatch(read.body, /settings\.json/, 'the file stays in the log, not in the answer')
  await new Promise(resolve => setImmediate(resolve)) // process warnings are emitted on the next tick
  t.same(warnings.map(w => w.replace(/ is not valid JSON: .*/, '')), [
    `bucket settings damaged: the bucket is left out of lists and its requests answer 10915 until the file is mended: ${file}`
  ], 'the log names the file, once for the lists and the request')

  const good = { format: 1, creationDate: '2026-01-01T00:00:00.000Z', settings: { cors: 5, lifecycle: 5 } }
  await writeFile(file, JSON.stringify(good))
  // Fields of the wrong type are ignored (their defaults apply): the bucket answers, with no rules.
  const cors = await app.inject({ method: 'GET', url: `/client/v4/accounts/${id}/r2/buckets/photos/cors`, headers: auth })
  t.same([cors.statusCode, cors.json().errors[0].code], [404, 10059], 'cors of the wrong type: the bucket answers that it has no CORS rules')
  t.notMatch(cors.body, /is not a function/)
  const lifecycle = await app.inject({ method: 'GET', url: `/client/v4/accounts/${id}/r2/buckets/photos/lifecycle`, headers: auth })
  const untouched = await app.inject({ method: 'GET', url: `/client/v4/accounts/${id}/r2/buckets/site/lifecycle`, headers: auth })
  t.same([lifecycle.statusCode, untouched.statusCode], [200, 200], 'lifecycle of the wrong type: the bucket answers')
  t.same(lifecycle.json().result, untouched.json().result, 'with the default, as a bucket that never had rules')
  t.equal(await readFile(file, 'utf8'), JSON.stringify(good), 'the file is left as it is')
  await new Promise(resolve => setImmediate(resolve))
  t.equal(warnings.length, 2, 'and the ignored fields are warned of once')
  t.match(warnings[1], /^bucket settings: a field is not valid and is ignored .*settings\.cors must be .*; settings\.lifecycle must be/)
})
