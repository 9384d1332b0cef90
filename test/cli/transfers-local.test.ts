/** Large objects and mirrors over the local transport, in child processes. */
import t from 'tap'
import { localCli } from './fixture.js'
import { largeObjects, mirrors } from './transfers.js'

t.test('large objects', async t => { await largeObjects(t, await localCli(t)) })
t.test('mirror', async t => { await mirrors(t, await localCli(t)) })
