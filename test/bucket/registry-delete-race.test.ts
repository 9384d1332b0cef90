/**
 * Deleting a bucket while PUTs race into it (issue 8 §3): every racing PUT
 * answers 200 (and its object stays, so the delete answers 409) or 404
 * NoSuchBucket, never 400 or 500; a late PUT never brings the deleted
 * bucket's directory back; a bucket created again with the same name
 * starts empty.
 */
import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { auth, gateway } from '../http/gateway-fixture.js'

t.test('PUTs racing a bucket deletion', async t => {
  const { app, registry, dataDir } = await gateway(t)
  const outcomes = { deleted: 0, refused: 0 }
  for (let round = 0; round < 12; round++) {
    const name = `race-${round}`
    await registry.create(name)
    await registry.open(name) // a handle in use, as on a busy server
    const puts = Array.from({ length: 16 }, async (_, i) => {
      // Spread the PUTs around the deletion.
      await new Promise(resolve => setTimeout(resolve, i % 8))
      return await app.inject({ method: 'PUT', url: `/${name}/k${i}`, headers: auth, payload: 'x'.repeat(100 + i * 5000) })
    })
    const deletion = (async () => {
      await new Promise(resolve => setTimeout(resolve, [0, 6, 12, 40][round % 4]))
      try {
        await registry.delete(name)
        return 'deleted'
      } catch (err) {
        return (err as { code?: number }).code
      }
    })()
    const answers = await Promise.all(puts)
    const deleted = await deletion
    const statuses = answers.map(a => a.statusCode)
    t.same(statuses.filter(s => s !== 200 && s !== 404), [], `round ${round}: only 200 and 404 (${statuses.join(' ')})`)
    t.comment(`round ${round}: ${String(deleted)}, ${statuses.join(' ')}`)
    for (const a of answers.filter(a => a.statusCode === 404)) t.equal(a.json().errors[0].code, 10006, 'NoSuchBucket')
    if (deleted === 'deleted') {
      outcomes.deleted++
      t.same(statuses.filter(s => s === 200), [], `round ${round}: no PUT was acknowledged into a deleted bucket`)
      await new Promise(resolve => setTimeout(resolve, 20))
      t.notOk(existsSync(path.join(dataDir, name)), `round ${round}: the directory stays gone`)
      t.equal(await registry.info(name), null, `round ${round}: the bucket stays gone`)
      await registry.create(name)
      t.same((await (await registry.open(name))!.list()).objects, [], `round ${round}: created again, it starts empty`)
    } else {
      outcomes.refused++
      t.equal(deleted, 10008, `round ${round}: the deletion is refused because an object was acknowledged`)
      for (const [i, a] of answers.entries()) {
        if (a.statusCode !== 200) continue
        const read = await app.inject({ method: 'GET', url: `/${name}/k${i}`, headers: auth })
        t.equal(read.statusCode, 200, `round ${round}: acknowledged k${i} is readable`)
      }
    }
  }
  t.comment(`deleted ${outcomes.deleted} times, refused ${outcomes.refused} times`)
})
