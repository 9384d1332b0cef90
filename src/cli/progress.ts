/**
 * The progress bar of transfers, drawn by cli-progress on stderr, and only
 * when stderr is a terminal and `--quiet` was not given: piped or redirected
 * output never carries it. One bar per file (bytes, rate, ETA), or one
 * overall bar for a recursive copy or a mirror (bytes of all files, files
 * done). Byte counts come from the streams themselves (`counted`), so a bar
 * shows bytes that really moved.
 */
import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createRequire } from 'node:module'
import type cliProgress from 'cli-progress'
import { shownText } from './terminal-text.js'

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']

/** cli-progress, loaded with the first bar: the server, which never draws one, never loads it. */
function barLibrary (): typeof cliProgress {
  return createRequire(import.meta.url)('cli-progress') as typeof cliProgress
}

export function humanBytes (bytes: number): string {
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`
}

export interface Tracker {
  add (bytes: number): void
  /** Marks the file done (or failed); a per-file bar stays on its line. */
  end (): void
}

const silentTracker: Tracker = { add () {}, end () {} }

interface BarState {
  bar: cliProgress.SingleBar
  started: number
  done: number
}

export class Progress {
  readonly #enabled: boolean
  #overall: (BarState & { files: number, filesDone: number }) | null = null

  /** `enabled`: stderr is a TTY and output is not quieted. */
  constructor (enabled: boolean) {
    this.#enabled = enabled
  }

  static forTerminal (quiet: boolean): Progress {
    return new Progress(!quiet && process.stderr.isTTY === true)
  }

  #newBar (format: string): cliProgress.SingleBar {
    const bars = barLibrary()
    return new bars.SingleBar({
      format,
      stream: process.stderr,
      hideCursor: true,
      barsize: 24,
      etaBuffer: 50,
      fps: 8,
      clearOnComplete: false
    }, bars.Presets.shades_classic)
  }

  #payload (state: BarState, total: number): Record<string, string> {
    const seconds = Math.max((Date.now() - state.started) / 1000, 0.001)
    return { done: humanBytes(state.done), size: total > 0 ? humanBytes(total) : '?', rate: `${humanBytes(Math.round(state.done / seconds))}/s` }
  }

  /** One bar for many files: `bytes` in `files` files. */
  startOverall (bytes: number, files: number): void {
    if (!this.#enabled || files === 0) return
    const bar = this.#newBar('{label} [{bar}] {percentage}% | {done}/{size} | {rate} | ETA {eta_formatted}')
    this.#overall = { bar, started: Date.now(), done: 0, files, filesDone: 0 }
    bar.start(Math.max(bytes, 1), 0, { label: `0/${files} files`, ...this.#payload(this.#overall, bytes) })
  }

  /** Follows one file of `size` bytes (undefined: unknown, as for stdin). */
  track (label: string, size: number | undefined): Tracker {
    if (!this.#enabled) return silentTracker
    const overall = this.#overall
    if (overall !== null) {
      const total = overall.bar.getTotal()
      return {
        add: bytes => {
          overall.done += bytes
          overall.bar.update(Math.min(overall.done, total), this.#payload(overall, total))
        },
        end: () => {
          overall.filesDone++
          overall.bar.update({ label: `${overall.filesDone}/${overall.files} files` })
        }
      }
    }
    const known = size !== undefined
    const bar = this.#newBar(known
      ? '{label} [{bar}] {percentage}% | {done}/{size} | {rate} | ETA {eta_formatted}'
      : '{label} {done} | {rate}')
    const state: BarState = { bar, started: Date.now(), done: 0 }
    const total = known ? Math.max(size, 1) : 1
    // The label names a key: its control characters are made visible, as on every other line.
    bar.start(total, 0, { label: shownText(label), ...this.#payload(state, size ?? 0) })
    let ended = false
    return {
      add: bytes => {
        state.done += bytes
        bar.update(known ? Math.min(state.done, total) : 0, this.#payload(state, size ?? 0))
      },
      end: () => {
        if (ended) return
        ended = true
        if (known && state.done >= size) bar.update(total, this.#payload(state, size))
        bar.stop()
      }
    }
  }

  stop (): void {
    this.#overall?.bar.stop()
    this.#overall = null
  }
}

/** A pass-through stream that reports the bytes flowing through it. */
export function counted (tracker: Tracker): Transform {
  return new Transform({
    transform (chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
      tracker.add(chunk.length)
      done(null, chunk)
    }
  })
}

/** `source` seen through `counted`: an error of the source reaches whoever reads the result. */
export function countedFrom (source: Readable, tracker: Tracker): Readable {
  const counter = counted(tracker)
  pipeline(source, counter).catch(() => {}) // a failure destroys `counter` with the error, so its reader sees it
  return counter
}
