/**
 * listen-host.ts: whether `--host` is loopback only, judged from what it
 * resolves to (a fake resolver here): a localhost name resolving to a
 * network address is refused, naming the addresses.
 */
import t from 'tap'
import { loopbackOnlyHost, type LookupAll } from '../../src/server/listen-host.js'
import { StartupError } from '../../src/server/preflight.js'

const resolving = (...addresses: string[]): LookupAll => async () => addresses.map(address => ({ address }))
const unresolved: LookupAll = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }) }
const unasked: LookupAll = async () => { throw new Error('an address needs no lookup') }

t.test('a localhost name is loopback only when every address it resolves to is', async t => {
  t.equal(await loopbackOnlyHost('localhost', resolving('127.0.0.1', '::1')), true)
  t.equal(await loopbackOnlyHost('files.localhost', resolving('127.0.0.1')), true)
  t.equal(await loopbackOnlyHost('ip6-localhost', resolving('::1')), true)
  await t.rejects(loopbackOnlyHost('files.localhost', resolving('192.0.2.2')), new StartupError(
    "--host files.localhost resolves to 192.0.2.2, which is not loopback: a localhost name must name this machine's loopback interface; give the address to listen on instead (and --token for a network address)"))
  await t.rejects(loopbackOnlyHost('localhost', resolving('127.0.0.1', '192.0.2.2')), /resolves to 192\.0\.2\.2, which is not loopback/, 'one address elsewhere is enough')
  t.equal(await loopbackOnlyHost('nowhere.localhost', unresolved), false, 'a name that does not resolve is left to the listen')
})

t.test('addresses are judged as they are; other names are not loopback only, whatever they resolve to', async t => {
  for (const host of ['127.0.0.1', '127.8.9.10', '::1', '[::1]']) t.equal(await loopbackOnlyHost(host, unasked), true, host)
  for (const host of ['0.0.0.0', '::', '192.0.2.2']) t.equal(await loopbackOnlyHost(host, unasked), false, host)
  t.equal(await loopbackOnlyHost('myhost', resolving('127.0.1.1')), false)
})
