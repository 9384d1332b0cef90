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

export async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return
  const exited = new Promise(resolve => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}
