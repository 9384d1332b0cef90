/**
 * The object commands of the command line (cp, ls, cat, stat, rm, mb, rb,
 * mirror) and `--version`, registered on the program of src/cli.ts. Each
 * command works on `--data` through the library, or on a running gateway
 * with `--endpoint`, through one interface (transport.ts).
 */
import { createRequire } from 'node:module'
import type { Command } from 'commander'
import type { ObjectCommandWiring } from './context.js'
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

/** Registers the commands; `wiring` comes from the composition root (src/cli.ts). */
export function registerObjectCommands (program: Command, wiring: ObjectCommandWiring): void {
  if (program.version() === undefined) program.version(packageVersion(), '-V, --version', 'print the version')
  registerCp(program, wiring)
  registerLs(program, wiring)
  registerCat(program, wiring)
  registerStat(program, wiring)
  registerRm(program, wiring)
  registerBuckets(program, wiring)
  registerMirror(program, wiring)
}
