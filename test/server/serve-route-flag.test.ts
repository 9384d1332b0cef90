/**
 * `serve --route`: a flag's value is one route, taken whole (a comma may
 * stand in a route: a path prefix `/a,b/`, an `error=` key, an `index=`
 * name); FSBUCKET_ROUTES holds several, comma- or space-separated, each
 * handed to the server as one route. Two routes in one flag (a route
 * followed by the start of another included) and a flag ending in a comma
 * are refused, asking for a flag each.
 */
import t from 'tap'
import { parseServe } from './serve-flags.js'

/** Parses `serve args` (with `env` set) in this process: the routes, or the refusal's text. */
async function parse (args: string[], env: Record<string, string> = {}): Promise<{ routes?: unknown, error?: string }> {
  const { value, error } = await parseServe('route', args, env)
  return error === undefined ? { routes: value } : { error }
}

t.test('the documented spellings: one route per --route, repeatable', async t => {
  t.same(await parse(['--route', 'cdn.localhost=site', '--route', '/assets/=site']), { routes: ['cdn.localhost=site', '/assets/=site'] })
  t.same(await parse(['--route', '/docs/=site;error=404.html', '--route', 'files.localhost=site;listing=on;index=off']),
    { routes: ['/docs/=site;error=404.html', 'files.localhost=site;listing=on;index=off'] })
})

t.test('a comma in a route stays in the route', async t => {
  t.same(await parse(['--route', '/a,b/=site']), { routes: ['/a,b/=site'] }, 'in a path prefix')
  t.same(await parse(['--route', '/docs/=site;error=errors/404,v2.html']), { routes: ['/docs/=site;error=errors/404,v2.html'] }, 'in an error document\'s key')
  t.same(await parse(['--route', 'cdn.localhost=site;index=a,b.html']), { routes: ['cdn.localhost=site;index=a,b.html'] }, 'in an index document\'s name')
  t.same(await parse(['--route', 'cdn.localhost=site;error=404.html ,v2']), { routes: ['cdn.localhost=site;error=404.html ,v2'] }, 'followed by text that starts no route')
  t.same(await parse(['--route', '  /docs/=site  ']), { routes: ['/docs/=site'] }, 'spaces around it go')
})

t.test('two routes in one --route are refused: a --route each', async t => {
  const { error } = await parse(['--route', '/x/=site', '--route', 'a.localhost=site,b.localhost=site'])
  t.match(error, /the 2nd --route holds 2 routes \(separated by a comma or a space\): give each route a --route of its own/)
  t.match((await parse(['--route', '/x/=site /y/=site'])).error, /the 1st --route holds 2 routes/)
})

t.test('a route followed by the start of another, which taken whole would be one route no one meant, is refused, naming it', async t => {
  const cases: Array<[string, string, string]> = [
    ['a.localhost=site;error=404.html,b.localhost=Bad_Name', 'b.localhost=Bad_Name', 'else an error document named "404.html,b.localhost=Bad_Name"'],
    ['a.localhost=site;index=off, b.localhost=no', 'b.localhost=no', 'else an index document'],
    ['/a/=site,/b,c/=site', '/b,c/=site', 'else the prefix "/a/=site,/b,c/"'],
    ['/a,b/=site,c.localhost=site', 'c.localhost=site', 'behind a route with a comma of its own'],
    ['cdn.localhost=site;listing=on /docs/=Site', '/docs/=Site', 'after a space']
  ]
  for (const [spec, second, why] of cases) {
    t.match((await parse(['--route', spec])).error, `the 1st --route holds a second route after a comma or a space ("${second}"): give each route a --route of its own`, why)
  }
})

t.test('a --route ending in a comma is refused, which would end its bucket or its last option', async t => {
  for (const spec of ['a.localhost=site,', '/docs/=site;error=404.html,', '/docs/=site;error=404.html , ']) {
    t.match((await parse(['--route', spec])).error, /the 1st --route ends with a comma: give each route a --route of its own, without a separator/, spec)
  }
  t.match((await parse(['--route', ',a.localhost=site'])).error, /Invalid route ",a.localhost=site": bad host name/, 'nor does one start with a comma')
})

t.test('FSBUCKET_ROUTES holds several, each handed on as one route', async t => {
  t.same(await parse([], { FSBUCKET_ROUTES: 'a.localhost=site, /x/=site;listing=on b.localhost=site' }),
    { routes: ['a.localhost=site', '/x/=site;listing=on', 'b.localhost=site'] })
  t.match((await parse([], { FSBUCKET_ROUTES: 'a.localhost=site,nonsense' })).error, /Invalid route "nonsense"/)
  t.same(await parse([], { FSBUCKET_ROUTES: ' a.localhost=site ,, b.localhost=site, ' }), { routes: ['a.localhost=site', 'b.localhost=site'] }, 'spaces around items, empty items and a trailing comma are skipped')
  t.match((await parse([], { FSBUCKET_ROUTES: '/a,b/=site' })).error, /Invalid route "\/a"/, 'a comma is always a separator there: a prefix holding one is refused, naming the piece')
  t.match((await parse([], { FSBUCKET_ROUTES: 'a.localhost=site;error=404.html,b.localhost=Bad_Name' })).error, /Invalid route "b.localhost=Bad_Name"/, 'each item is one route')
  t.same(await parse(['--route', '/only/=site'], { FSBUCKET_ROUTES: 'a.localhost=site,b.localhost=site' }), { routes: ['/only/=site'] }, 'a flag beats the variable')
})

t.test('a route that is no route is refused, naming it', async t => {
  t.match((await parse(['--route', 'site'])).error, /Invalid route "site": expected host=bucket/)
  t.match((await parse(['--route', 'bad host=site'])).error, /Invalid route/)
})

t.test('the server takes each route whole: a comma in one is part of its path prefix', async t => {
  const { loadRoutes } = await import('../../src/server/startup.js')
  t.match(await loadRoutes(null, ['/a,b/=site', 'cdn.localhost=site;index=a,b.html']), [
    { host: null, pathPrefix: '/a,b/', bucket: 'site' },
    { host: 'cdn.localhost', pathPrefix: '/', bucket: 'site', site: { indexDocument: 'a,b.html' } }
  ])
})
