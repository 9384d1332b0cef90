/**
 * What deleted buckets leave, for the registries of both stores that keep
 * files (the data directory's and PostgreSQL's): a delete moves the
 * bucket's directory to `.deleted-<name>-<hex>` and then removes it, so one
 * cut short after the move (a crash) leaves the directory with every body
 * it held. The next sweep removes it, however young (nothing reads it once
 * moved); what only looks like one (another name, a symbolic link) is left
 * alone, and so is every live bucket.
 */
import { existsSync, lstatSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Test } from 'tap'
import type { BucketObjectBody, BucketRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

export async function deletedBucketLeftovers (t: Test, registry: BucketRegistry, dataDir: string): Promise<void> {
  await registry.create('kept')
  await (await registry.open('kept'))!.put('k', 'still here')
  await registry.create('gone')
  await registry.delete('gone')
  // As a delete that crashed right after moving the directory leaves it.
  const left = path.join(dataDir, '.deleted-gone-0123456789ab')
  await mkdir(path.join(left, '.fsbucket', 'blobs', 'ab'), { recursive: true })
  await writeFile(path.join(left, '.fsbucket', 'blobs', 'ab', 'ab0123456789abcdef'), 'a body of the deleted bucket')
  const lookalike = path.join(dataDir, '.deleted-notes')
  await mkdir(lookalike)
  const outside = `${testdir(t)}-outside`
  await mkdir(outside)
  await writeFile(path.join(outside, 'mine.txt'), 'not the gateway\'s')
  const link = path.join(dataDir, '.deleted-linked-0123456789ab')
  await symlink(outside, link)

  const report = await registry.sweep()
  t.equal(report.removedLeftovers, 1, 'one leftover removed')
  t.notOk(existsSync(left), 'the deleted bucket\'s directory is gone, bodies and all')
  t.ok(existsSync(lookalike), 'a directory of another name is left alone')
  t.ok(lstatSync(link).isSymbolicLink(), 'a link of that name is left alone')
  t.ok(existsSync(path.join(outside, 'mine.txt')), 'and nothing is removed through it')
  const kept = await (await registry.open('kept'))!.get('k') as BucketObjectBody
  t.equal(await kept.text(), 'still here', 'a live bucket is untouched')
}
