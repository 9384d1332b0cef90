#!/usr/bin/env -S node --max-semi-space-size=8
import module from 'node:module'

// Node 22.1 and later keep the code they compile (in the OS's temp directory) for the next start, which then skips
// most of its compiling; Node 20 has no such cache, and starts as before.
module.enableCompileCache?.()
const { main } = await import('../dist/bundle/main.js')

await main(process.argv)
