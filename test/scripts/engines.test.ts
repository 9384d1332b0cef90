/**
 * The packages a clone installs (package-lock.json) admit the Nodes
 * fsbucket runs on (docs/deployment.md, "Node versions"): those the
 * gateway runs with admit the oldest Node of each line its `engines` names;
 * the development ones (the build, lint and test tools, some of which ask
 * for 22.13 on that line) the Node running this test, so `npm install`, the
 * README's first command, prints no `EBADENGINE` warning there.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import semver from 'semver'
import t from 'tap'
import { docsDir } from '../docs.js'

const root = path.dirname(docsDir)

interface Lock { packages: Record<string, { dev?: boolean, devOptional?: boolean, engines?: { node?: string } | string[] }> }

t.test('every locked package admits the Nodes fsbucket runs on', async t => {
  const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } }
  const lock = JSON.parse(await readFile(path.join(root, 'package-lock.json'), 'utf8')) as Lock
  // The oldest version of each line `engines` admits: 20.19.0, 22.12.0, and so on.
  const oldest = manifest.engines.node.split('||').map(range => semver.minVersion(range.trim())?.version)
  t.ok(oldest.length >= 2 && oldest.every(v => v !== undefined), `lines named by ${manifest.engines.node}`)
  const refusing: string[] = []
  for (const [where, entry] of Object.entries(lock.packages)) {
    const wanted = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (wanted === undefined || where === '') continue
    for (const version of entry.dev === true || entry.devOptional === true ? [process.versions.node] : oldest) {
      if (version !== undefined && !semver.satisfies(version, wanted)) refusing.push(`${where} wants node ${wanted}, not ${version}`)
    }
  }
  t.same(refusing, [])
})
