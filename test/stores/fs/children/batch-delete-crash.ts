/**
 * A child process for the view-intents test: puts `keys` keys (small bodies
 * kept in the catalog and larger ones in files, so the view holds both
 * written-out files and hard links), then deletes the first `deleted` of
 * them in one call, and SIGKILLs itself the moment that delete's catalog
 * commit has resolved (durable), before the store has touched the view: a
 * crash at the worst instant, with no hook in the store. The store's commit
 * is reached through `Commits.prototype.commit`, patched here only.
 */
import { openBucket } from '../../../../src/index.js'
import { Commits } from '../../../../src/stores/fs/commit.js'
import { batchBody, batchKey } from './batch-keys.js'

const [dir, keys, deleted] = process.argv.slice(2)
if (dir === undefined || keys === undefined || deleted === undefined) throw new Error('usage: batch-delete-crash <bucket dir> <keys> <deleted>')

const bucket = await openBucket(dir)
const names = Array.from({ length: Number(keys) }, (_, i) => batchKey(i))
for (const [i, key] of names.entries()) await bucket.put(key, batchBody(i))

const commit = Commits.prototype.commit
Commits.prototype.commit = async function <T> (this: Commits, fn: () => T): Promise<T> {
  const result = await commit.call(this, fn) as T
  process.kill(process.pid, 'SIGKILL')
  return result
}
await bucket.delete(names.slice(0, Number(deleted)))
// Reached only when the delete never went through Commits.commit: the test is then no longer testing anything.
process.stderr.write('batch-delete-crash: the delete resolved without being killed\n')
process.exit(3)
