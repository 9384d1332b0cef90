/**
 * A share link's stated expiry is the instant its URL stops working: the
 * URL's X-Amz-Date (a whole second) plus X-Amz-Expires, whenever in a
 * second the link was made; its token expires then too, and the link
 * lives at least as long as asked. A long key's token name is cut whole.
 */
import t from 'tap'
import { makeShareLink } from '../../src/doors/share-links.js'

t.test('expiresOn is X-Amz-Date plus X-Amz-Expires, and the token expires with the URL', async t => {
  for (const ms of [0, 400, 999]) {
    const now = new Date(Date.UTC(2026, 10, 30, 12, 0, 5, ms))
    let tokenExpiry: Date | undefined
    const tokens = {
      create: async (spec: { expiresOn?: Date | null }) => {
        tokenExpiry = spec.expiresOn ?? undefined
        return { id: 'f'.repeat(32), accessKeyId: 'f'.repeat(32), secretAccessKey: 'e'.repeat(64), expiresOn: spec.expiresOn?.toISOString() ?? null } as any
      }
    }
    const link = await makeShareLink(tokens, { endpoint: new URL('http://127.0.0.1:8788'), bucket: 'photos', key: 'a.txt', method: 'GET', seconds: 1, now })
    const url = new URL(link.url)
    const date = url.searchParams.get('X-Amz-Date') ?? ''
    const signedAt = Date.UTC(+date.slice(0, 4), +date.slice(4, 6) - 1, +date.slice(6, 8), +date.slice(9, 11), +date.slice(11, 13), +date.slice(13, 15))
    const urlExpiry = signedAt + Number(url.searchParams.get('X-Amz-Expires')) * 1000
    t.equal(link.expiresOn, new Date(urlExpiry).toISOString(), `made at .${ms}: the answer says when the URL stops working`)
    t.equal(tokenExpiry?.getTime(), urlExpiry, `made at .${ms}: and its token expires then`)
    t.ok(urlExpiry - now.getTime() >= 1000, `made at .${ms}: a link of 1 s lives at least 1 s (${urlExpiry - now.getTime()} ms)`)
  }
})

t.test('notAfter cuts the link: it never outlives its maker\'s token or an instant asked for, signed at the next second or not', async t => {
  for (const ms of [0, 400, 999]) {
    const now = new Date(Date.UTC(2026, 10, 30, 12, 0, 5, ms))
    const tokens = { create: async (spec: { expiresOn?: Date | null }) => ({ id: 'f'.repeat(32), accessKeyId: 'f'.repeat(32), secretAccessKey: 'e'.repeat(64), expiresOn: spec.expiresOn?.toISOString() ?? null }) as any }
    for (const notAfterMs of [30_300, 30_900, 31_000]) {
      const notAfter = new Date(now.getTime() + notAfterMs)
      const link = await makeShareLink(tokens, { endpoint: new URL('http://127.0.0.1:8788'), bucket: 'photos', key: 'a.txt', method: 'GET', seconds: 3600, now, notAfter })
      t.ok(Date.parse(link.expiresOn) <= notAfter.getTime(), `made at .${ms}, cut at +${notAfterMs} ms: ends ${link.expiresOn}, not after ${notAfter.toISOString()}`)
      t.ok(Date.parse(link.expiresOn) > notAfter.getTime() - 2000, 'and not much before')
    }
  }
})

t.test('a long key\'s token name is cut to 120 characters between characters, never inside a surrogate pair', async t => {
  let name = ''
  const tokens = {
    create: async (spec: { name: string }) => {
      name = spec.name
      return { id: 'f'.repeat(32), accessKeyId: 'f'.repeat(32), secretAccessKey: 'e'.repeat(64), expiresOn: null } as any
    }
  }
  // `share bkt1/` is 11 characters: the emoji's first half is the 119th.
  for (const key of [`${'a'.repeat(107)}\u{1f600}tail.txt`, `${'a'.repeat(106)}\u{1f600}tail.txt`, 'b'.repeat(300)]) {
    await makeShareLink(tokens, { endpoint: new URL('http://127.0.0.1:8788'), bucket: 'bkt1', key, method: 'GET', seconds: 60, now: new Date() })
    t.ok(name.length <= 120, `${name.length} characters`)
    t.ok(name.endsWith('…'))
    t.equal(name, name.toWellFormed?.() ?? Buffer.from(name, 'utf8').toString('utf8'), 'no lone surrogate')
  }
})
