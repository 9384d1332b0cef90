#!/usr/bin/env node
import module from 'node:module'

// Node 22.1 and later keep the code they compile (in the OS's temp directory) for the next start, which then skips
// most of its compiling; Node 20 has no such cache, and starts as before. `serve --memory` writes nothing, that cache included.
if (!process.argv.includes('--memory')) module.enableCompileCache?.()
// `serve` with several workers forks the first one first, so it boots while this process loads the command line (src/server/early-fork.ts).
if (process.argv[2] === 'serve') (await import('../dist/bundle/early-fork.js')).forkEarly(process.argv.slice(2))
const { main } = await import('../dist/bundle/main.js')

await main(process.argv)
