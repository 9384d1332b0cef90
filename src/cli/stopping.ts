/**
 * Work to undo when a command stops before it is done: multipart uploads in
 * progress (aborted, so that no parts wait for the sweeper) and the
 * temporary files of downloads (removed, so that none is left beside the
 * destination). The work registers what would undo it and releases that
 * once it has finished or undone itself.
 *
 * Ctrl-C or SIGTERM while anything is registered undoes it all and exits
 * 130 or 143 (a second one exits at once); with nothing registered a
 * signal ends the process as Node does, at once. A standard output that fails (a reader gone, a full disk)
 * stops the command through `stopNow` too (context.ts).
 *
 * Once stopping, nothing new starts (the work asks `isStopping` before each
 * step, upload and part), but work already under way may still register its
 * undo (an upload whose creation was in flight): the stop runs undos until
 * none is left, so what was registered late is undone too. An undo waits for
 * its work in flight (the parts being written) before undoing it, and the
 * whole stop waits at most `undoLimitMs`: a server that stopped answering
 * must not keep Ctrl-C from ending the command (a second Ctrl-C ends it at
 * once, as Node does).
 */

interface Undo {
  kind: 'upload' | 'file'
  run: () => Promise<void>
}

const pending = new Set<Undo>()
let stopping = false

/** How long a stop waits for its undos: parts in flight to settle, aborts to be answered. */
const undoLimitMs = 10_000

function interrupted (signal: NodeJS.Signals): void {
  const code = signal === 'SIGINT' ? 130 : 143
  // A second signal while the undos run: the user insists, as Node's own handling would end it.
  if (stopping) process.exit(code)
  const uploads = [...pending].filter(undo => undo.kind === 'upload').length
  process.stderr.write(`\nfsbucket: interrupted${uploads === 0 ? '' : `; aborting ${uploads} multipart upload${uploads === 1 ? '' : 's'}`}\n`)
  void stopNow(code)
}

/**
 * Listens for the signals while anything is registered, and keeps
 * listening once stopping, until the exit: a listener gone while the
 * signal is being handled lets signal-exit (proper-lockfile's, loaded by
 * the file store's locks) find itself alone and raise the signal again,
 * which killed the command before its undos ran.
 */
function listen (on: boolean): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    if (on) process.on(signal, interrupted)
    else process.off(signal, interrupted)
  }
}

/** Registers `run`, called if the command stops early; the answer releases it. */
export function undoIfStopped (kind: Undo['kind'], run: () => Promise<void>): () => void {
  if (pending.size === 0 && !stopping) listen(true)
  const undo = { kind, run }
  pending.add(undo)
  return () => {
    if (!pending.delete(undo) || pending.size > 0 || stopping) return
    listen(false)
  }
}

/** The command is stopping: what fails now fails because of that, and has nothing to report. */
export function isStopping (): boolean {
  return stopping
}

/** Runs the undos registered, and those registered while they run, until none is left. */
async function undoAll (): Promise<void> {
  while (pending.size > 0) {
    const undos = [...pending]
    pending.clear()
    await Promise.allSettled(undos.map(async undo => { await undo.run() }))
  }
}

/** Undoes everything registered (for `undoLimitMs` at most), then exits with `code`. */
export async function stopNow (code: number): Promise<never> {
  if (!stopping) {
    stopping = true
    let timer: NodeJS.Timeout | undefined
    await Promise.race([undoAll(), new Promise<void>(resolve => { timer = setTimeout(resolve, undoLimitMs) })])
    clearTimeout(timer)
    process.exit(code)
  }
  return await new Promise<never>(() => {}) // the first stop exits
}
