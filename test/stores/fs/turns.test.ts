/**
 * Looks shared within a turn of the event loop (src/stores/turn.ts).
 *
 * A commit of another process is learned here synchronously, through
 * `execFileSync`, so it lands between two reads of one turn: the only way a
 * shared look could show an older row. Without sharing (a library caller,
 * the default) the second read sees it; with sharing (a server) it is seen
 * from the next turn on, and the process's own writes are seen at once.
 *
 * The turn's end: a look taken in a timer or an immediate, then a commit
 * of another process, then a request read by the next poll (../arrivals.ts):
 * the request must see the commit.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { openBucket, shareChecksWithinTurns, type Bucket } from '../../../src/index.js'
import { TurnMemo, currentTurn } from '../../../src/stores/turn.js'
import { testdir } from '../../testdir.js'
import { arrivals, lookCommitArrive, phases, unshared } from '../arrivals.js'

const index = new URL('../../../src/index.js', import.meta.url).href

/** Puts `value` under `key` from another process, returning when it has committed. */
function putElsewhere (dir: string, key: string, value: string): void {
  execFileSync(process.execPath, ['--input-type=module', '-e', `
    const { openBucket } = await import(${JSON.stringify(index)})
    const bucket = await openBucket(${JSON.stringify(dir)})
    await bucket.put(${JSON.stringify(key)}, ${JSON.stringify(value)})
    await bucket.close()`])
}

async function nextTurn (): Promise<void> {
  await new Promise(resolve => setImmediate(resolve))
}

async function etagOf (bucket: Bucket, key: string): Promise<string | undefined> {
  return (await bucket.head(key))?.etag
}

t.test('without sharing, every read looks again', async t => {
  shareChecksWithinTurns(() => false)
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir)
  t.teardown(() => bucket.close())
  const first = (await bucket.put('k', 'one'))!
  t.equal(await etagOf(bucket, 'k'), first.etag)
  putElsewhere(dir, 'k', 'two')
  t.not(await etagOf(bucket, 'k'), first.etag, 'the commit made meanwhile is seen in the same turn')
  t.not(currentTurn(), currentTurn(), 'no two looks share a turn')
})

t.test('with sharing, a turn keeps its look; the next turn looks again', async t => {
  shareChecksWithinTurns(() => true)
  t.teardown(() => { shareChecksWithinTurns(() => false) })
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir)
  t.teardown(() => bucket.close())
  const first = (await bucket.put('k', 'one'))!
  await nextTurn()
  t.equal(await etagOf(bucket, 'k'), first.etag)
  putElsewhere(dir, 'k', 'two')
  t.equal(await etagOf(bucket, 'k'), first.etag, 'within the turn, the look taken before the commit stands')
  await nextTurn()
  const seen = await etagOf(bucket, 'k')
  t.not(seen, first.etag, 'the next turn sees the other process\'s commit')

  const own = (await bucket.put('k', 'three'))!
  t.equal(await etagOf(bucket, 'k'), own.etag, 'a write of this process is seen at once')
  t.equal(currentTurn(), currentTurn(), 'looks of one turn share its number')
})

t.test('with sharing, a look taken in a timer or an immediate is not handed to a request the next poll reads', async t => {
  shareChecksWithinTurns(() => true)
  t.teardown(() => { shareChecksWithinTurns(() => false) })
  const dir = path.join(testdir(t), 'bucket')
  const bucket = await openBucket(dir)
  t.teardown(() => bucket.close())
  await bucket.put('k', 'first')
  const requests = await arrivals(t)
  const rounds = 3
  for (const phase of phases) {
    let missed = 0
    for (let round = 0; round < rounds; round++) {
      const seen = await lookCommitArrive(requests, phase,
        () => { void bucket.head('k') },
        () => { putElsewhere(dir, 'k', `${phase} ${round}`) },
        async () => await etagOf(bucket, 'k'))
      if (seen !== await unshared(async () => await etagOf(bucket, 'k'))) missed++
    }
    t.equal(missed, 0, `${phase}: the request sees the commit finished before it was sent (missed in ${missed} of ${rounds} rounds)`)
  }
})

t.test('a memo forgets on demand and at the end of the turn', async t => {
  shareChecksWithinTurns(() => true)
  t.teardown(() => { shareChecksWithinTurns(() => false) })
  const memo = new TurnMemo<number | null>()
  let looks = 0
  const look = (): number | null => { looks++; return null }
  memo.get('a', look)
  memo.get('a', look)
  t.equal(looks, 1, 'one look per key and turn, a null answer included')
  memo.forget()
  memo.get('a', look)
  t.equal(looks, 2, 'forgotten after a write')
  await nextTurn()
  memo.get('a', look)
  t.equal(looks, 3, 'looked at again in the next turn')
})
