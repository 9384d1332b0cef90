/**
 * Work to undo when a command stops before it is done: multipart uploads in
 * progress (aborted, so that no parts wait for the sweeper) and the
 * temporary files of downloads (removed, so that none is left beside the
 * destination). The work registers what would undo it and releases that
 * once it has finished or undone itself.
 *
 * Ctrl-C or SIGTERM while anything is registered undoes it all and exits
 * 130 or 143; with nothing registered a signal ends the process as Node
 * does, at once. A standard output that fails (a reader gone, a full disk)
 * stops the command through `stopNow` too (context.ts).
 */

interface Undo {
  kind: 'upload' | 'file'
  run: () => Promise<void>
}

const pending = new Set<Undo>()
let stopping = false

function interrupted (signal: NodeJS.Signals): void {
  const uploads = [...pending].filter(undo => undo.kind === 'upload').length
  process.stderr.write(`\nfsbucket: interrupted${uploads === 0 ? '' : `; aborting ${uploads} multipart upload${uploads === 1 ? '' : 's'}`}\n`)
  void stopNow(signal === 'SIGINT' ? 130 : 143)
}

function listen (on: boolean): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    if (on) process.once(signal, interrupted)
    else process.off(signal, interrupted)
  }
}

/** Registers `run`, called if the command stops early; the answer releases it. */
export function undoIfStopped (kind: Undo['kind'], run: () => Promise<void>): () => void {
  if (pending.size === 0) listen(true)
  const undo = { kind, run }
  pending.add(undo)
  return () => {
    if (!pending.delete(undo) || pending.size > 0) return
    listen(false)
  }
}

/** The command is stopping: what fails now fails because of that, and has nothing to report. */
export function isStopping (): boolean {
  return stopping
}

/** Undoes everything registered, then exits with `code`. */
export async function stopNow (code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    const undos = [...pending]
    pending.clear()
    listen(false)
    await Promise.allSettled(undos.map(async undo => { await undo.run() }))
    process.exit(code)
  }
  return await new Promise<never>(() => {}) // the first stop exits
}
