/**
 * `openBucket`, `openRegistry` and `openMemoryRegistry` check their options
 * as `startServer` does (options-check.ts), before they touch the disk: an
 * unknown key (with the one meant, for a typo), a value of the wrong type,
 * `null` options, and a number out of its range are refused with Node's
 * codes, naming the function; `undefined` (options, or an option) counts as
 * left out. And the shared checker's table.
 */
import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { openBucket, openMemoryRegistry, openRegistry, type OpenFsBucketOptions, type OpenFsRegistryOptions, type RegistryOptions } from '../../src/index.js'
import { checkOptions, meantKey } from '../../src/server/options-check.js'
import { testdir } from '../testdir.js'

const wrongType = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
const wrongValue = { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' }
const outOfRange = { name: 'RangeError', code: 'ERR_INVALID_ARG_VALUE' }

async function refusedBucket (t: Test, dir: string, options: unknown, expected: object, message: RegExp): Promise<void> {
  await t.rejects(openBucket(dir, options as OpenFsBucketOptions), { ...expected, message }, `openBucket ${JSON.stringify(options) ?? String(options)}`)
}

async function refusedRegistry (t: Test, dir: string, options: unknown, expected: object, message: RegExp): Promise<void> {
  await t.rejects(openRegistry(dir, options as OpenFsRegistryOptions), { ...expected, message }, `openRegistry ${JSON.stringify(options) ?? String(options)}`)
}

t.test('openBucket refuses what it would otherwise ignore or fail on later', async t => {
  const dir = path.join(testdir(t), 'bucket')
  await refusedBucket(t, dir, { fsnyc: false }, wrongValue, /^openBucket: unknown option fsnyc \(did you mean fsync\?\)$/)
  await refusedBucket(t, dir, { create: false }, wrongValue, /^openBucket: unknown option create \(known: fsync, clock, minPartSize, uploadMaxAgeMs, sweepIntervalMs, notifications, defaultStorageClass\)$/)
  await refusedBucket(t, dir, { fsync: 'no' }, wrongType, /^openBucket: fsync must be a boolean \(got string "no"\)$/)
  await refusedBucket(t, dir, { minPartSize: 'big' }, wrongType, /^openBucket: minPartSize must be a number \(got string "big"\)$/)
  await refusedBucket(t, dir, { clock: 5 }, wrongType, /^openBucket: clock must be a function \(got number 5\)$/)
  await refusedBucket(t, dir, { notifications: 'photos' }, wrongType, /^openBucket: notifications must be an object/)
  await refusedBucket(t, dir, null, wrongType, /^openBucket: options must be an object \(got null\)$/)
  await refusedBucket(t, dir, 'fast', wrongType, /^openBucket: options must be an object \(got string "fast"\)$/)
  await refusedBucket(t, dir, { minPartSize: -1 }, outOfRange, /^openBucket: minPartSize must be an integer number of bytes from 0 to 5363466240 \(got -1\)$/)
  await refusedBucket(t, dir, { minPartSize: NaN }, outOfRange, /minPartSize must be an integer/)
  await refusedBucket(t, dir, { uploadMaxAgeMs: -5 }, outOfRange, /^openBucket: uploadMaxAgeMs must be a number of ms, 0 or more \(got -5\)$/)
  await refusedBucket(t, dir, { sweepIntervalMs: 2 ** 31 }, outOfRange, /^openBucket: sweepIntervalMs must be from 1 to 2147483647 ms, or 0 for no timer \(got 2147483648\)$/)
  await refusedBucket(t, dir, { sweepIntervalMs: -1 }, outOfRange, /sweepIntervalMs must be from 1/)
  t.notOk(existsSync(dir), 'refused before the bucket directory was made')
})

t.test('openRegistry refuses a misspelt catalog rather than opening SQLite', async t => {
  const dir = path.join(testdir(t), 'data')
  await refusedRegistry(t, dir, { catalogg: 'postgres://u:p@127.0.0.1:1/db' }, wrongValue, /^openRegistry: unknown option catalogg \(did you mean catalog\?\)$/)
  await refusedRegistry(t, dir, { fsnyc: false }, wrongValue, /did you mean fsync\?/)
  await refusedRegistry(t, dir, { sweepIntervalMs: 1000 }, wrongValue, /^openRegistry: unknown option sweepIntervalMs \(known: fsync, clock, minPartSize, warn, catalog, catalogConnections\)$/)
  await refusedRegistry(t, dir, { catalog: 5 }, wrongType, /^openRegistry: catalog must be a string \(got number\)$/)
  await refusedRegistry(t, dir, { clock: new Date() }, wrongType, /^openRegistry: clock must be a function \(got an object\)$/)
  await refusedRegistry(t, dir, { minPartSize: '5' }, wrongType, /minPartSize must be a number/)
  await refusedRegistry(t, dir, { catalogConnections: 0 }, outOfRange, /^openRegistry: catalogConnections must be an integer from 1 to 1000 \(got 0\)$/)
  await refusedRegistry(t, dir, null, wrongType, /^openRegistry: options must be an object \(got null\)$/)
  t.notOk(existsSync(dir), 'refused before the data directory was made')
})

t.test('openMemoryRegistry refuses its options alike, at once', async t => {
  const open = (options: unknown): void => { openMemoryRegistry(options as RegistryOptions) }
  t.throws(() => { open(null) }, { ...wrongType, message: /^openMemoryRegistry: options must be an object \(got null\)$/ })
  t.throws(() => { open({ fsync: false }) }, { ...wrongValue, message: /^openMemoryRegistry: unknown option fsync \(known: clock, minPartSize, warn\)$/ })
  t.throws(() => { open({ warn: 5 }) }, { ...wrongType, message: /^openMemoryRegistry: warn must be a function \(got number 5\)$/ })
  t.throws(() => { open({ minpartsize: 5 }) }, { ...wrongValue, message: /did you mean minPartSize\?/ })
  t.throws(() => { open({ clock: 5 }) }, { ...wrongType, message: /^openMemoryRegistry: clock must be a function \(got number 5\)$/ })
  t.throws(() => { open({ minPartSize: 1.5 }) }, { ...outOfRange, message: /minPartSize must be an integer number of bytes/ })
})

t.test('undefined options, and options set to undefined, are left out; an empty catalog is SQLite', async t => {
  const dir = testdir(t)
  const bucket = await openBucket(path.join(dir, 'bucket'), { fsync: undefined, clock: undefined, minPartSize: 5, sweepIntervalMs: 0 })
  await bucket.put('k', 'v')
  t.equal((await bucket.head('k'))?.size, 1)
  await bucket.close()
  await (await openBucket(path.join(dir, 'bucket'), undefined)).close()
  const registry = await openRegistry(path.join(dir, 'data'), { catalog: '', catalogConnections: undefined, fsync: false })
  await registry.close()
  await (await openRegistry(path.join(dir, 'data'), undefined)).close()
  const memory = openMemoryRegistry(undefined)
  await memory.close()
  const clocked = openMemoryRegistry({ clock: () => new Date(0), minPartSize: undefined })
  await clocked.close()
})

t.test('the shared checker: the key meant, and nothing suggested when none is near or two are', async t => {
  const known = ['dataDir', 'memory', 'host', 'port', 's3Port', 'fsync', 'catalog', 'catalogConnections']
  const cases: Array<[string, string | undefined]> = [
    ['datadir', 'dataDir'], ['fsnyc', 'fsync'], ['catalogg', 'catalog'], ['s3port', 's3Port'], ['prot', 'port'],
    ['dataDirectory', undefined], ['tls', undefined], ['hort', undefined], ['catalogConnection', 'catalogConnections']
  ]
  for (const [key, meant] of cases) t.equal(meantKey(key, known), meant, key)
  t.same(checkOptions('f', undefined, { a: 'string' }), {})
  t.throws(() => checkOptions('f', { a: '' }, { a: 'string' }), { ...wrongValue, message: 'f: a must not be empty' })
  t.same(checkOptions('f', { a: '' }, { a: 'string' }, ['a']), { a: '' })
  t.throws(() => checkOptions('f', [], { a: 'string' }), { ...wrongType, message: 'f: options must be an object (got an array)' })
})
