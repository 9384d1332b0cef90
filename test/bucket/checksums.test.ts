/**
 * The engine's running CRCs: the catalogue check values, checksums computed
 * side by side keeping their own state (one WebAssembly instance serves
 * them all), a checksum started before the WebAssembly is ready, and a
 * package that CommonJS can still require (no top-level await).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { Crc64Nvme } from '@aws-sdk/crc64-nvme'
import { runningChecksum } from '../../src/bucket/checksums.js'

const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src')

async function whole (algorithm: 'crc32c' | 'crc64nvme', data: Uint8Array): Promise<string> {
  const running = runningChecksum(algorithm)
  running.update(data)
  return (await running.digest()).toString('hex')
}

/** CRC64NVME by the AWS SDK's own JavaScript. */
async function reference (data: Buffer): Promise<string> {
  const crc = new Crc64Nvme()
  crc.update(data)
  return Buffer.from(await crc.digest()).toString('hex')
}

t.test('the catalogue check values of "123456789"', async t => {
  const data = Buffer.from('123456789')
  t.equal(await whole('crc32c', data), 'e3069283')
  t.equal(await whole('crc64nvme', data), 'ae8b14860a799888')
  t.equal(await whole('crc64nvme', Buffer.alloc(0)), '0000000000000000', 'nothing at all')
})

t.test('checksums computed side by side keep their own state', async t => {
  const a = randomBytes(300_000)
  const b = randomBytes(300_000)
  const ra = runningChecksum('crc64nvme')
  const rb = runningChecksum('crc64nvme')
  const rc = runningChecksum('crc32c')
  for (let offset = 0; offset < a.length; offset += 7_001) {
    ra.update(a.subarray(offset, offset + 7_001))
    rb.update(b.subarray(offset, offset + 7_001))
    rc.update(a.subarray(offset, offset + 7_001))
  }
  t.equal((await ra.digest()).toString('hex'), await reference(a))
  t.equal((await rb.digest()).toString('hex'), await reference(b))
  t.equal((await rc.digest()).toString('hex'), await whole('crc32c', a), 'in pieces as in one piece')
})

t.test('a checksum finished, or started with no bytes, while another is under way leaves both right', async t => {
  const a = randomBytes(50_000)
  const small = randomBytes(1_000)
  const long = runningChecksum('crc64nvme')
  long.update(a.subarray(0, 20_000))
  // Whole in one update, between two of the long one's.
  t.equal(await whole('crc64nvme', small), await reference(small), 'a small body between two updates of another')
  const empty = runningChecksum('crc64nvme')
  long.update(a.subarray(20_000, 30_000))
  t.equal((await empty.digest()).toString('hex'), '0000000000000000', 'no bytes, while another holds the instance')
  const late = runningChecksum('crc64nvme')
  late.update(small)
  long.update(a.subarray(30_000))
  const digest = (await long.digest()).toString('hex')
  t.equal(digest, await reference(a), 'the long one, taken over three times')
  t.equal((await long.digest()).toString('hex'), digest, 'asked again, the same digest')
  t.equal((await late.digest()).toString('hex'), await reference(small), 'one started after another finished')
})

const checksumsModule = pathToFileURL(path.join(dist, 'bucket', 'checksums.js')).href

t.test('a checksum started as the module loads, before its WebAssembly is ready, is right', async t => {
  const script = `
    const { runningChecksum, crcImplementation } = await import(${JSON.stringify(checksumsModule)})
    const before = crcImplementation()
    const r = runningChecksum('crc64nvme')
    r.update(Buffer.from('1234'))
    r.update(Buffer.from('56789'))
    console.log(before, (await r.digest()).toString('hex'), crcImplementation())`
  t.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim(), 'loading ae8b14860a799888 webassembly',
    'started while loading, finished by the WebAssembly')
})

t.test('where WebAssembly cannot run (node --jitless), the tables compute the same CRCs', async t => {
  const data = Buffer.from(Array.from({ length: 100_003 }, (_, i) => (i * 7919) % 251))
  const script = `
    const { runningChecksum, checksumOf, crcImplementation } = await import(${JSON.stringify(checksumsModule)})
    const data = Buffer.from(Array.from({ length: 100_003 }, (_, i) => (i * 7919) % 251))
    const out = []
    for (const algorithm of ['crc32c', 'crc64nvme']) {
      out.push((await checksumOf(algorithm, Buffer.from('123456789'))).toString('hex'))
      const r = runningChecksum(algorithm)
      for (let offset = 0; offset < data.length; offset += 4_099) r.update(data.subarray(offset, offset + 4_099))
      out.push((await r.digest()).toString('hex'))
    }
    console.log(crcImplementation(), ...out)`
  const expected = ['tables', 'e3069283', await whole('crc32c', data), 'ae8b14860a799888', await whole('crc64nvme', data)].join(' ')
  // stderr is kept out of the test log: V8 says there that --jitless turns WebAssembly off.
  t.equal(execFileSync(process.execPath, ['--jitless', '--input-type=module', '-e', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim(), expected)
})

t.test('CommonJS can require the package where Node can require ES modules', { skip: (process.features as { require_module?: boolean }).require_module !== true && 'this Node cannot require ES modules' }, async t => {
  const script = `const fsbucket = require(${JSON.stringify(path.join(dist, 'index.js'))}); console.log(typeof fsbucket.openBucket)`
  t.equal(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim(), 'function', 'no top-level await in its graph')
})
