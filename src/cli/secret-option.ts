/**
 * The parser of a flag whose value may be a secret or hold one (a token, a
 * URL's user:password@): commander's own refusal repeats the value whole
 * ("argument 'http://key:secret@host' is invalid"), into a terminal, a CI
 * log or a process supervisor's journal. This one names the flag and its
 * variable only. Used by `serve` (main.ts) and `share` (share.ts).
 */
import type { Command } from 'commander'

/** Wraps `parse` so that its refusal names `option` and `variable`, never the value; `command` is the command the flag belongs to. */
export function secretValue<T, P> (command: () => Command, option: string, variable: string, parse: (value: string, previous: P) => T) {
  return (value: string, previous: P): T => {
    try {
      return parse(value, previous)
    } catch (err) {
      return command().error(`error: option '${option}' (or ${variable}) is invalid: ${(err as Error).message}`, { exitCode: 1, code: 'commander.invalidArgument' })
    }
  }
}
