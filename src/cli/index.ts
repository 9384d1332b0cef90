/**
 * The object commands of the command line (cp, ls, cat, stat, rm, mb, rb,
 * mirror), registered on the program of src/main.ts. Each
 * command works on `--data` through the library, or on a running gateway
 * with `--endpoint`, through one interface (transport.ts).
 */
import type { Command } from 'commander'
import type { ObjectCommandWiring } from './context.js'
import { registerBuckets } from './commands/buckets.js'
import { registerCat } from './commands/cat.js'
import { registerCp } from './commands/cp.js'
import { registerLs } from './commands/ls.js'
import { registerMirror } from './commands/mirror.js'
import { registerRm } from './commands/rm.js'
import { registerStat } from './commands/stat.js'

/** Registers the commands; `wiring` comes from the composition root (src/main.ts). */
export function registerObjectCommands (program: Command, wiring: ObjectCommandWiring): void {
  registerCp(program, wiring)
  registerLs(program, wiring)
  registerCat(program, wiring)
  registerStat(program, wiring)
  registerRm(program, wiring)
  registerBuckets(program, wiring)
  registerMirror(program, wiring)
}
