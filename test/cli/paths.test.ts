/** Where a key lands under a download's directory: inside it, for a root directory too. */
import t from 'tap'
import path from 'node:path'
import { localPathFor } from '../../src/cli/paths.js'

t.test('localPathFor under the root directory', { skip: path.sep !== '/' && 'POSIX paths' }, async t => {
  const table: Array<[string, string, string | null]> = [
    ['/', 'a.txt', '/a.txt'],
    ['/', 'dir/b.txt', '/dir/b.txt'],
    ['/', '..', null],
    ['/', 'dir/../x', null],
    ['/', '/etc/passwd', null],
    ['//', 'a.txt', '/a.txt'],
    ['/tmp/', 'a.txt', '/tmp/a.txt'],
    ['/tmp', 'a.txt', '/tmp/a.txt']
  ]
  for (const [dir, relative, want] of table) t.equal(localPathFor(dir, relative), want, `${dir} + ${relative}`)
})
