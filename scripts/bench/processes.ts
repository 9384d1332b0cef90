/** The servers a benchmark starts: a free port for each, waiting until it answers, stopping it. */
import type { ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'

/**
 * The environment a fsbucket server runs with here: what `npm start` gives it
 * (`MALLOC_ARENA_MAX=2`, unless already set), so that the memory measured is
 * that of the server as users start it.
 */
export const serverEnv: NodeJS.ProcessEnv = { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' }

export async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

/** Resolves once something on `port` answers HTTP (any status). */
export async function waitForPort (port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      await (await fetch(`http://127.0.0.1:${port}/`)).arrayBuffer()
      return
    } catch {
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  throw new Error(`nothing listening on ${port}`)
}

/**
 * Stops `child`: SIGTERM, then SIGKILL if it has not exited `killAfterMs`
 * later. A child already gone, whether it exited or died of a signal (a
 * Ctrl-C reaches every process of the terminal's group), or never started,
 * is left as it is: no exit is coming to wait for.
 */
export async function stop (child: ChildProcess, killAfterMs = 5_000): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs)
  await exited
  clearTimeout(timer)
}

/**
 * Makes a bench's `cleanup` (stopping its servers, removing its directory)
 * run once, whichever comes first: the function returned, called when the
 * bench ends or fails, or a SIGINT or SIGTERM, after which the process
 * exits as that signal would have ended it (128 + its number).
 */
export function cleanupOnce (cleanup: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined
  const once = async (): Promise<void> => {
    running ??= cleanup()
    await running
  }
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => { void once().finally(() => process.exit(code)) })
  }
  return once
}
