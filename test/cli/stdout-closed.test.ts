/**
 * A reader that goes away (`| head -1`) ends a command: quietly, exit 0,
 * when all it cut short was output (cat, a --dry-run's plan); with one line
 * and exit 1 when cp -r, mirror or rm still had items to copy or remove,
 * which stay undone. The pipelines run in bash, whose PIPESTATUS gives the
 * command's own exit code.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { bin, cleanEnv } from './fixture.js'

t.setTimeout(5 * 60 * 1000)

interface Piped { code: number, stderr: string }

/** `fsbucket <args> | <reader>` in bash: the command's exit code and stderr. */
async function piped (args: string[], reader: string, cwd: string): Promise<Piped> {
  const quoted = [process.execPath, bin, ...args].map(a => `'${a.replace(/'/g, "'\\''")}'`).join(' ')
  return await new Promise((resolve, reject) => {
    execFile('bash', ['-c', `${quoted} | ${reader} >/dev/null; echo "\${PIPESTATUS[0]}"`], { cwd, env: cleanEnv(), maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err !== null) reject(new Error(`bash failed: ${err.message}`))
      else resolve({ code: Number(stdout.trim()), stderr })
    })
  })
}

async function keysOf (dataDir: string, bucketName: string, prefix = ''): Promise<string[]> {
  const registry = await openRegistry(dataDir, { fsync: false })
  try {
    const bucket = await registry.open(bucketName)
    const keys: string[] = []
    let cursor: string | undefined
    do {
      const page = await bucket!.list({ prefix, cursor })
      keys.push(...page.objects.map(o => o.key))
      cursor = page.truncated ? page.cursor : undefined
    } while (cursor !== undefined)
    return keys
  } finally {
    await registry.close()
  }
}

async function setUp (t: Test, files: number): Promise<{ dataDir: string, work: string }> {
  const dataDir = testdir(t)
  const work = path.join(dataDir, '..', `${path.basename(dataDir)}-work`)
  t.teardown(async () => { await fsp.rm(work, { recursive: true, force: true }) })
  await fsp.mkdir(path.join(work, 'many'), { recursive: true })
  for (let i = 0; i < files; i++) await fsp.writeFile(path.join(work, 'many', `f${String(i).padStart(3, '0')}.txt`), `file ${i}\n`)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('bkt')
  await registry.close()
  return { dataDir, work }
}

const cutOff = /^fsbucket: [a-z]+ \S+: stopped with items left to do: standard output was closed \(its reader went away\)\n$/

t.test('cp -r and mirror cut off with files left exit 1, and say so', async t => {
  const { dataDir, work } = await setUp(t, 300)
  const cp = await piped(['cp', '-r', 'many', 'fsb://bkt/m/', '--data', dataDir], 'head -1', work)
  const copied = (await keysOf(dataDir, 'bkt', 'm/')).length
  t.ok(copied < 300, `cut off: ${copied} of 300 files stored`)
  t.equal(cp.code, 1, 'cp -r exits 1')
  t.match(cp.stderr, cutOff, 'with one line')

  const mirror = await piped(['mirror', 'many', 'fsb://bkt/n', '--data', dataDir], 'head -1', work)
  t.ok((await keysOf(dataDir, 'bkt', 'n/')).length < 300, 'mirror cut off')
  t.equal(mirror.code, 1, 'mirror exits 1')
  t.match(mirror.stderr, cutOff)
})

t.test('rm cut off with locations left exits 1; one that finished exits 0', async t => {
  const { dataDir, work } = await setUp(t, 20)
  t.equal((await piped(['cp', '-r', 'many', 'fsb://bkt/d/', '--data', dataDir, '-q'], 'cat', work)).code, 0)
  const locations = Array.from({ length: 20 }, (_, i) => `fsb://bkt/d/f${String(i).padStart(3, '0')}.txt`)
  const rm = await piped(['rm', ...locations, '--data', dataDir], 'head -1', work)
  const left = (await keysOf(dataDir, 'bkt', 'd/')).length
  t.ok(left > 0, `cut off: ${left} of 20 keys left`)
  t.equal(rm.code, 1, 'rm exits 1')
  t.match(rm.stderr, cutOff)

  // One batch of keys, removed whole before its lines are printed: nothing is left when the reader goes.
  const rest = await piped(['rm', '-r', 'fsb://bkt/d', '--data', dataDir], 'head -c 0', work)
  t.same(await keysOf(dataDir, 'bkt', 'd/'), [], 'all removed')
  t.equal(rest.code, 0, 'exit 0: the record was cut, not the work')
  t.equal(rest.stderr, '')
})

t.test('mb and rb cut off with buckets left exit 1; exit 0 only when every bucket was done', async t => {
  const { dataDir, work } = await setUp(t, 0)
  const names = Array.from({ length: 12 }, (_, i) => `cut-${i}`)
  let cut = 0
  for (let round = 0; round < 3; round++) {
    const mb = await piped(['mb', ...names.map(n => `fsb://${n}`), '--data', dataDir], 'head -1', work)
    const registry = await openRegistry(dataDir, { fsync: false })
    const listed = new Set((await registry.list()).map(b => b.name))
    for (const name of names) {
      if (!listed.has(name)) continue
      const bucket = (await registry.open(name))!
      for (let i = 0; i < 3; i++) await bucket.put(`k${i}`, 'x')
    }
    await registry.close()
    const left = names.filter(n => !listed.has(n)).length
    if (left > 0) {
      cut++
      t.equal(mb.code, 1, `round ${round}: mb cut off with ${left} buckets left exits 1`)
      t.match(mb.stderr, cutOff)
    } else t.equal(mb.code, 0, `round ${round}: every bucket made, exit 0`)
    const rb = await piped(['rb', '--force', ...names.filter(n => listed.has(n)).map(n => `fsb://${n}`), '--data', dataDir], 'head -1', work)
    const after = await openRegistry(dataDir, { fsync: false })
    const kept = (await after.list()).map(b => b.name).filter(n => names.includes(n))
    await after.close()
    if (kept.length > 0) {
      cut++
      t.equal(rb.code, 1, `round ${round}: rb cut off with ${kept.length} buckets left exits 1`)
      t.match(rb.stderr, cutOff)
    } else t.equal(rb.code, 0, `round ${round}: every bucket removed, exit 0`)
    // What a cut-off run left is removed before the next round.
    if (kept.length > 0) t.equal((await piped(['rb', '--force', ...kept.map(n => `fsb://${n}`), '--data', dataDir, '-q'], 'cat', work)).code, 0)
  }
  t.ok(cut > 0, `the reader went away before the work was done in ${cut} runs of 6`)
})

t.test('a command whose output is its purpose ends quietly, exit 0', async t => {
  const { dataDir, work } = await setUp(t, 300)
  const big = Buffer.alloc(4 * 1024 * 1024, 'x')
  await fsp.writeFile(path.join(work, 'big.txt'), big)
  t.equal((await piped(['cp', 'big.txt', 'fsb://bkt/big.txt', '--data', dataDir, '-q'], 'cat', work)).code, 0)
  t.equal((await piped(['cp', '-r', 'many', 'fsb://bkt/m/', '--data', dataDir, '-q'], 'cat', work)).code, 0)
  // Long keys, so that a listing and a plan are more than a pipe holds: they are still being written when the reader goes.
  const registry = await openRegistry(dataDir, { fsync: false })
  const bucket = (await registry.open('bkt'))!
  for (let i = 0; i < 200; i++) await bucket.put(`m/long/${'x'.repeat(500)}${i}`, 'x')
  await registry.close()
  for (const args of [['cat', 'fsb://bkt/big.txt'], ['ls', '-r', 'fsb://bkt/m'], ['rm', '-r', '--dry-run', 'fsb://bkt/m']]) {
    const ran = await piped([...args, '--data', dataDir], 'head -c 1', work)
    t.equal(ran.code, 0, args.join(' '))
    t.equal(ran.stderr, '', `${args.join(' ')}: nothing on stderr`)
  }
  t.equal((await keysOf(dataDir, 'bkt', 'm/')).length, 500, 'the dry run removed nothing')
})
