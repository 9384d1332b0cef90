/**
 * What every object command shares: the options common to all of them
 * (where the buckets are, how to report), the transport they select, and
 * how a command fails. A command's failure prints one line on stderr,
 * `fsbucket: <command> <target>: <what went wrong>`, and sets exit code 1;
 * the stack follows only with `--debug`. Commands over many items (cp -r,
 * rm -r, mirror) report each failed item the same way and go on with the
 * rest, then exit 1 (a failed item sets the exit code at once, so that a
 * stop later on keeps it). Every line written here shows a bucket's text (keys,
 * metadata, a server's messages) with its control characters escaped
 * (terminal-text.ts); `--json` lines are exact JSON.
 */
import { InvalidArgumentError, Option, type Command } from 'commander'
import { typeByName } from '../doors/type-by-name.js'
import { catalogOption, dataOption } from '../doors/command-options.js'
import { describeError } from './errors.js'
import { Progress } from './progress.js'
import { isStopping, stopNow } from './stopping.js'
import { jsonLine, shownText } from './terminal-text.js'
import { DEFAULT_MIN_PART_BYTES, MAX_PART_BYTES, MAX_PUT_BYTES, type BucketRegistry } from '../bucket/index.js'
import type { ObjectTransport, RemoteObject, WriteMetadata } from './transport.js'
import type { Tuning } from './transfer.js'

/** One line of text on stdout, its control characters made visible (terminal-text.ts). */
export function printLine (line: string): void {
  process.stdout.write(`${shownText(line)}\n`)
}

/** One line of `--json` output on stdout. */
export function printJson (value: unknown): void {
  process.stdout.write(`${jsonLine(value)}\n`)
}

/** `fsbucket: <command> <target>: <what went wrong>` on stderr, every part shown safely. */
export function printFailure (name: string, target: string, what: string): void {
  process.stderr.write(`${shownText(`fsbucket: ${name}${target === '' ? '' : ` ${target}`}: ${what}`)}\n`)
}

/** What the composition root gives the commands: how to open the registry of a data directory. */
export interface ObjectCommandWiring {
  openRegistry: (dataDir: string, catalog?: string) => Promise<BucketRegistry>
}

export interface CommonOptions {
  data: string
  catalog?: string
  endpoint?: string
  token?: string
  timeout: number
  quiet: boolean
  debug: boolean
}

export interface TransferOptions {
  contentType?: string
  cacheControl?: string
  meta: Record<string, string>
  partSize: number
  parallel: number
}

export interface CommandContext {
  transport: ObjectTransport
  progress: Progress
  quiet: boolean
  /** A line on stdout (the record of what was done), unless --quiet; its control characters are made visible. */
  say: (line: string) => void
  /** Reports one failed item and lets the command go on; the command then exits 1. */
  report: (target: string, err: unknown) => void
}

const MiB = 1024 * 1024

/** `8MiB`, `5M`, `16mb`, `1048576` → bytes. */
export function parseSize (value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*([kmg]?)(i?b)?$/i.exec(value.trim())
  if (match === null) throw new InvalidArgumentError('expected a size such as 8MiB, 16M or 5242880')
  const factor = { '': 1, k: 1024, m: MiB, g: 1024 * MiB }[match[2].toLowerCase() as '' | 'k' | 'm' | 'g']
  const bytes = Math.floor(Number(match[1]) * factor)
  if (bytes < 1 || bytes > 5 * 1024 * MiB) throw new InvalidArgumentError('expected a size from 1 byte to 5GiB')
  return bytes
}

/**
 * The largest `--part-size`: a file no larger goes up in one put, a larger
 * one in parts of this size, and the store takes neither above 5 GiB less
 * 5 MiB (limits.ts). Refused at once, not after the bytes have moved.
 */
const MAX_PART_SIZE = Math.min(MAX_PUT_BYTES, MAX_PART_BYTES)

/** `--part-size`: a size the store takes for every part but the last (5 MiB at least), else the upload could never complete, and for one put or one part (limits.ts). */
export function parsePartSize (value: string): number {
  const bytes = parseSize(value)
  if (bytes < DEFAULT_MIN_PART_BYTES || bytes > MAX_PART_SIZE) {
    throw new InvalidArgumentError(`expected a part size from 5MiB (the smallest part the store takes) to ${MAX_PART_SIZE / MiB}MiB (the largest part or single put it takes: 5GiB less 5MiB)`)
  }
  return bytes
}

function parseParallel (value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 64) throw new InvalidArgumentError('expected an integer from 1 to 64')
  return Number(value)
}

/** `--timeout`: whole seconds, up to a day (a silence that long is no transfer). */
function parseTimeout (value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 86_400) throw new InvalidArgumentError('expected a number of seconds from 1 to 86400')
  return Number(value)
}

function parseMeta (value: string, previous: Record<string, string> = {}): Record<string, string> {
  const equals = value.indexOf('=')
  const name = equals === -1 ? '' : value.slice(0, equals).trim().toLowerCase()
  // Names travel as `x-meta-<name>` headers over HTTP, so they are header tokens.
  if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new InvalidArgumentError('expected name=value, the name made of letters, digits and -_.')
  return { ...previous, [name]: value.slice(equals + 1) }
}

/** The options of every object command. */
export function addCommonOptions (command: Command): Command {
  return command
    .addOption(dataOption())
    .addOption(catalogOption())
    .addOption(new Option('-e, --endpoint <url>', 'a running gateway to talk to over HTTP instead of --data').env('FSBUCKET_ENDPOINT'))
    .addOption(new Option('-t, --token <token>', 'bearer token for --endpoint').env('FSBUCKET_TOKEN'))
    .addOption(new Option('--timeout <seconds>', 'seconds a request to --endpoint may go without a byte moving').env('FSBUCKET_TIMEOUT').default(60).argParser(parseTimeout))
    .option('-q, --quiet', 'print no progress bar and no record of what was done', false)
    .option('--debug', 'print the stack of an error', false)
}

/** The options of the commands that write objects. */
export function addTransferOptions (command: Command): Command {
  return command
    .option('--content-type <type>', 'Content-Type to store (default: from the file name)')
    .option('--cache-control <value>', 'Cache-Control to store')
    .option('--meta <name=value>', 'custom metadata (repeatable)', parseMeta, {})
    .addOption(new Option('--part-size <size>', 'objects larger than this go up in parts of this size').default(8 * MiB, '8MiB').argParser(parsePartSize))
    .addOption(new Option('--parallel <n>', 'parts or files in flight at once').default(4).argParser(parseParallel))
}

export function tuningOf (options: TransferOptions): Tuning {
  return { partSize: options.partSize, parallel: options.parallel }
}

/**
 * The metadata an upload stores: flags first, then the source object's (for
 * copies between buckets), then a type guessed from `name`.
 */
export function metadataFor (name: string, options: TransferOptions, source?: RemoteObject): WriteMetadata {
  const httpMetadata = { ...source?.httpMetadata }
  httpMetadata.contentType = options.contentType ?? httpMetadata.contentType ?? typeByName(name)
  if (options.cacheControl !== undefined) httpMetadata.cacheControl = options.cacheControl
  const customMetadata = Object.keys(options.meta).length > 0 ? { ...options.meta } : { ...source?.customMetadata }
  return { httpMetadata, customMetadata }
}

/**
 * `--endpoint` (flag or variable) selects HTTP, unless `--data` was given as
 * a flag and the endpoint only by the variable. Both given as flags are
 * refused, as a bad flag is: neither can be taken as the one meant.
 */
async function transportFor (options: CommonOptions, command: Command, wiring: ObjectCommandWiring): Promise<ObjectTransport> {
  const endpoint = options.endpoint
  const dataFlag = command.getOptionValueSource('data') === 'cli'
  const endpointFlag = command.getOptionValueSource('endpoint') === 'cli'
  if (dataFlag && endpointFlag) {
    command.error('error: option \'--endpoint\' cannot be used with option \'--data\' (one names a running gateway, the other a data directory: give one)', { exitCode: 1, code: 'commander.conflictingOption' })
  }
  // Each transport is loaded when chosen, not by every start of the command line.
  if (endpoint !== undefined && endpoint !== '' && (endpointFlag || !dataFlag)) {
    const { HttpTransport } = await import('./transport-http.js')
    return new HttpTransport(endpoint, options.token, options.timeout)
  }
  const { LocalTransport } = await import('./transport-local.js')
  return new LocalTransport(options.data, async dataDir => await wiring.openRegistry(dataDir, options.catalog))
}

let watchingStdout = false
/** The command writing to stdout now, for the line a failed stdout prints. */
let stdoutUser = { name: '', target: '' }
/** Items (files, keys, locations) the command has yet to copy or remove: what a stop would leave undone. */
let itemsLeft = 0

/**
 * Counts items of work still to do (`count` > 0) or done (< 0), failed ones
 * included. A step is counted done before its line is printed, so that the
 * line of the last one, cut off, finds nothing left.
 */
export function itemsToDo (count: number): void {
  itemsLeft += count
}

/**
 * A reader that went away (`fsbucket cat ... | head`) ends the command. When
 * what it cut short was output (cat, ls, stat, `cp ... -`, a `--dry-run`'s
 * plan, the record of work all done), it ends quietly, as it ends `cat`, and
 * the exit code is what the command had earned so far. When items were left
 * to copy or remove (cp, mirror, rm: the reader took the record's first
 * lines), the command stops with them undone: one line and exit 1, for a
 * pipeline that went on as if all were done would act on a half copy. A
 * stdout that cannot be written (a full disk under a redirection) ends it
 * with one line and exit 1. Either way what is in progress is undone first
 * (stopping.ts).
 */
export function watchStdout (name: string, target: string): void {
  stdoutUser = { name, target }
  if (watchingStdout) return
  watchingStdout = true
  process.stdout.on('error', err => {
    const { name, target } = stdoutUser
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') {
      if (itemsLeft > 0 && !isStopping()) {
        printFailure(name, target, 'stopped with items left to do: standard output was closed (its reader went away)')
        void stopNow(1)
        return
      }
      void stopNow(typeof process.exitCode === 'number' ? process.exitCode : 0)
      return
    }
    printFailure(name, target, `cannot write to standard output: ${describeError(err)}`)
    void stopNow(1)
  })
}

/**
 * Runs one command: opens the transport, runs `work`, closes the transport,
 * and turns a failure into the one line and exit code 1. `target` names what
 * the command works on, for that line.
 */
export async function runCommand (
  name: string, target: string, command: Command, wiring: ObjectCommandWiring, work: (context: CommandContext) => Promise<void>
): Promise<void> {
  if (isStopping()) return // a command of several locations starts none once stopped (stopping.ts)
  const options = command.opts<CommonOptions>()
  watchStdout(name, target)
  const fail = (what: string, err: unknown): void => {
    if (isStopping()) return // the stop said why (stopping.ts)
    process.exitCode = 1 // at once: a stop later on (stdout's reader gone) exits with it
    printFailure(name, what, describeError(err))
    // A stack is many lines: each shown safely (its message may quote a key), the line breaks kept.
    if (options.debug) process.stderr.write(`${((err as Error)?.stack ?? String(err)).split('\n').map(shownText).join('\n')}\n`)
  }
  let transport: ObjectTransport | null = null
  const progress = Progress.forTerminal(options.quiet)
  try {
    transport = await transportFor(options, command, wiring)
    await work({
      transport,
      progress,
      quiet: options.quiet,
      say: line => { if (!options.quiet) printLine(line) },
      report: fail
    })
  } catch (err) {
    fail(target, err)
  } finally {
    progress.stop()
    // Stopping, the undos still need the transport (an abort is a request); the stop ends the process once they are done.
    if (!isStopping()) await transport?.close().catch(err => { fail(target, err) })
  }
}
