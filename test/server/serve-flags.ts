/**
 * `serve`'s flags parsed in the test's process, as the command line and
 * its variables would give them, with nothing run: what the options hold,
 * or the refusal's text.
 */
import type { Command } from 'commander'
import { buildCli } from '../../src/main.js'

/** Parses `serve args` (with `env` set): the option `option`'s value, or the refusal's text. */
export async function parseServe (option: string, args: string[], env: Record<string, string> = {}): Promise<{ value?: unknown, error?: string }> {
  const serve: Command = buildCli().commands.find(c => c.name() === 'serve')!
  let error = ''
  // Stops where the process would exit: a CommanderError thrown back would be wrapped again by commander, as it never is when it exits.
  serve.exitOverride(err => { throw new Error(err.message) }).configureOutput({ writeErr: text => { error += text }, writeOut: () => {} }).action(() => {})
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    await serve.parseAsync(args, { from: 'user' })
    return { value: serve.opts()[option] }
  } catch (err) {
    return { error: `${error}${(err as Error).message}` }
  } finally {
    for (const name of Object.keys(env)) {
      if (saved[name] === undefined) delete process.env[name]
      else process.env[name] = saved[name]
    }
  }
}
