import t from 'tap'
import { isWellFormedMediaType } from '../../src/doors/any-content-type.js'

t.test('isWellFormedMediaType: what Fastify is left to parse', async t => {
  const wellFormed = ['text/plain', 'text/plain; charset=utf-8', 'multipart/form-data; boundary=----x', 'a/b;q="x;y"', 'application/vnd.api+json', 'text/plain ;a=b']
  const hidden = ['', ';;;', 'a/b/c', 'text/plain, text/html', 'text/plain;', 'text', '/plain', 'text/', 'te xt/plain', 'text/plain; a', 'a/b;q="open']
  for (const value of wellFormed) t.ok(isWellFormedMediaType(value), JSON.stringify(value))
  for (const value of hidden) t.notOk(isWellFormedMediaType(value), JSON.stringify(value))
})
