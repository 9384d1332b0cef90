/**
 * Where a worker of `fsbucket serve --workers N` starts: the primary
 * (serve.ts) forks this module rather than the command line, so a worker
 * loads neither the commands nor their option parser, and takes the
 * server's options as the primary parsed them, over the cluster's channel.
 *
 * It starts loading its doors at once, while the primary is still parsing
 * its command line (the first worker of `serve` is forked as it starts:
 * early-fork.ts; the others once that one listens) or checking, and waits
 * for the options, which come only once every check passed. Told to drain
 * before then, or sent a SIGTERM of its own, it exits: it has served
 * nothing. Once it listens on every port, it says so (serve.ts).
 */
import module from 'node:module'
import { receiveServeOptions, serveOne } from './serve.js'
import { sayStoppingAlone } from './worker-messages.js'

// As bin/fsbucket.js: Node 22.1 and later reuse the code they compiled at the previous start (absent on Node 20).
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.()
// Ctrl-C reaches the whole process group; the primary decides (serve.ts).
process.on('SIGINT', () => {})
// A SIGHUP to the whole group, before serveOne's handler (which leaves the reload to the primary's word) is set.
process.on('SIGHUP', () => {})
// A failure here surfaces from serveOne's own import of the same module.
import('./gateway.js').catch(() => {})

// A SIGTERM of its own before it serves (loading, or waiting for its options): it has served nothing, so it tells the
// primary (which starts another) and exits; once it has its options, serveOne's handler (serve.ts) drains instead.
// It stays on, doing nothing once the options came: taken off, Node's default (death) would hold until serveOne's is on.
let unserved = true
process.on('SIGTERM', () => { if (unserved) sayStoppingAlone('SIGTERM', () => process.exit(0)) })

try {
  const options = await receiveServeOptions()
  if (options === null) process.exit(0)
  unserved = false
  await serveOne(options, true)
} catch (err) {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
}
