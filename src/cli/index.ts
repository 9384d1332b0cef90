/**
 * The object commands of the command line (cp, ls, cat, stat, rm, mb, rb,
 * mirror) and `--version`, registered on the program of src/cli.ts. Each
 * command works on `--data` through the library, or on a running gateway
 * with `--endpoint`, through one interface (transport.ts).
 */
import { createRequire } from 'node:module'
import type { Command } from 'commander'
import { registerBuckets } from './commands/buckets.js'
import { registerCat } from './commands/cat.js'
import { registerCp } from './commands/cp.js'
import { registerLs } from './commands/ls.js'
import { registerMirror } from './commands/mirror.js'
import { registerRm } from './commands/rm.js'
import { registerStat } from './commands/stat.js'

/** The package's version, from package.json (dist/src/cli/ → the package root). */
export function packageVersion (): string {
  return (createRequire(import.meta.url)('../../../package.json') as { version: string }).version
}

export function registerObjectCommands (program: Command): void {
  if (program.version() === undefined) program.version(packageVersion(), '-V, --version', 'print the version')
  registerCp(program)
  registerLs(program)
  registerCat(program)
  registerStat(program)
  registerRm(program)
  registerBuckets(program)
  registerMirror(program)
  // A reader that went away (`fsbucket cat ... | head`) ends the command quietly.
  process.stdout.on('error', err => {
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') process.exit(process.exitCode ?? 0)
    throw err
  })
}
