import t from 'tap'
import { typeByName } from '../../src/doors/type-by-name.js'

t.test('a type comes from the extension of the last segment only', async t => {
  const cases: Array<[string, string]> = [
    ['photo.jpg', 'image/jpeg'],
    ['Photo.JPG', 'image/jpeg'],
    ['dir.d/page.html', 'text/html'],
    ['archive.tar.gz', 'application/gzip'],
    // No extension: mime-types alone would take each of these for one.
    ['html', 'application/octet-stream'],
    ['svg', 'application/octet-stream'],
    ['dir/html', 'application/octet-stream'],
    ['.html', 'application/octet-stream'],
    ['x.html/', 'application/octet-stream'],
    ['a.html/readme', 'application/octet-stream'],
    ['name.', 'application/octet-stream'],
    ['file.unknown-extension', 'application/octet-stream']
  ]
  for (const [name, type] of cases) t.equal(typeByName(name), type, name)
})
