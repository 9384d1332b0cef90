/** Keys of two spellings (NFC and NFD) over the http transport, in child processes. */
import t from 'tap'
import { httpCli } from './fixture.js'
import { unicodeKeys } from './unicode-keys.js'

// A few dozen child processes, each starting Node and the program.
t.setTimeout(10 * 60 * 1000)

t.test('keys of two spellings, through a gateway (--endpoint)', async t => { await unicodeKeys(t, await httpCli(t)) })
