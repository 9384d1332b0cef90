/**
 * docs/development.md's layout tree names every folder of src/, test/ and
 * scripts/ on a line of its own, at its depth, and no folder that is gone.
 */
import { readdir } from 'node:fs/promises'
import path from 'node:path'
import t from 'tap'
import { docsDir, docsSection } from './docs.js'

const root = path.dirname(docsDir)

async function folders (dir: string): Promise<string[]> {
  const entries = await readdir(path.join(root, dir), { recursive: true, withFileTypes: true })
  return entries.filter(e => e.isDirectory()).map(e => path.relative(root, path.join(e.parentPath, e.name)))
}

/** The folders the tree lists: a line whose first word ends in `/`, its parents by indentation (two spaces a level). */
function listedFolders (tree: string): string[] {
  const listed: string[] = []
  const parents: string[] = []
  for (const line of tree.split('\n')) {
    const match = /^( *)(\S+)\/(\s|$)/.exec(line)
    if (match === null) continue
    const depth = match[1].length / 2
    parents.length = depth
    parents.push(match[2])
    listed.push(parents.join('/'))
  }
  return listed
}

t.test('the layout tree lists each folder once, at its place', async t => {
  const section = await docsSection('development.md', '## Layout')
  const tree = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? ''
  t.ok(tree !== '', 'the Layout section has its tree')
  const listed = listedFolders(tree).filter(f => /^(src|test|scripts)\//.test(f))
  const actual = [...await folders('src'), ...await folders('test'), ...await folders('scripts')]
  t.same([...listed].sort(), [...new Set(listed)].sort(), 'no folder twice')
  t.same([...new Set(listed)].sort(), actual.sort())
})
