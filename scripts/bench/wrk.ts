/**
 * wrk, the load generator of the benchmarks' small-request rows (and of
 * bench:http's large bodies): a C program, two threads, which leaves the
 * servers the cores autocannon (a Node client, parsing every answer in
 * JavaScript) would take from them. Absent, the benches fall back to
 * autocannon and say so.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** wrk's path, or null when it is not installed. */
export const wrkPath = ['/usr/bin/wrk', '/usr/local/bin/wrk'].find(p => existsSync(p)) ?? null

export interface WrkLoad {
  connections: number
  /** Seconds measured. */
  seconds: number
  /** Seconds of the same load before, not measured (with `warmUpArgs` as the script's arguments when given). */
  warmUp: number
  /** Seconds wrk waits for an answer before counting a timeout. */
  timeout?: number
  headers?: Record<string, string>
  /** A Lua script (wrk's `-s`), and the arguments it is given. */
  script?: string
  args?: string[]
  warmUpArgs?: string[]
}

export interface WrkResult {
  /** Answers per second (every answer: see `errors`). */
  rate: number
  /** Answers per second that were 2xx or 3xx (a failing server answers fast). */
  okRate: number
  /** Requests answered in the measured run. */
  requests: number
  /** Bytes per second of its "Transfer/sec" line (the answers' headers included). */
  bytesPerSecond: number
  /** Its lines about socket errors (timeouts among them) and answers other than 2xx/3xx, joined; null when there were none. */
  errors: string | null
}

const MiB = 1024 * 1024

/**
 * What went wrong in a run, from wrk's output: its "Socket errors" line
 * (connect, read, write, timeout) and its "Non-2xx or 3xx responses" line,
 * each printed only when it counts something, joined; null when neither is
 * there. A run can have both, and a bench that reads only the first would
 * miss the other.
 */
export function wrkErrors (stdout: string): string | null {
  const lines = stdout.match(/Socket errors:.*|Non-2xx or 3xx responses: \d+/g)
  return lines === null ? null : lines.map(line => line.trim()).join('; ')
}

/**
 * A wrk run whose every answer was a 2xx or 3xx, with no socket error or
 * timeout: any other is refused, naming `what` (the server and row), since
 * an error answers fast and would count as the server's throughput.
 */
export async function wrkClean (what: string, url: string, load: WrkLoad): Promise<WrkResult> {
  const result = await wrk(url, load)
  if (result.errors !== null) throw new Error(`${what}: wrk met ${result.errors}; no figure is kept from that run`)
  return result
}

/** Runs wrk (2 threads) against `url` as `load` says; errors are printed as they are met. */
export async function wrk (url: string, load: WrkLoad): Promise<WrkResult> {
  if (wrkPath === null) throw new Error('wrk is not installed')
  // wrk sends its own Host unless given one spelled `Host` (a signed request's `host` would go twice).
  const headers = Object.entries(load.headers ?? {}).map(([name, value]) => [name.toLowerCase() === 'host' ? 'Host' : name, value])
  const args = ['-t2', `-c${load.connections}`, '--timeout', `${load.timeout ?? 10}s`, ...headers.flatMap(([name, value]) => ['-H', `${name}: ${value}`])]
  if (load.script !== undefined) args.push('-s', load.script)
  const scriptArgs = (given: string[] | undefined): string[] => given === undefined ? [] : ['--', ...given]
  // A script wrk cannot run is reported on stderr, and wrk then sends plain GETs: that is no measure.
  const wrkRun = async (runArgs: string[]): Promise<string> => {
    const { stdout, stderr } = await run(wrkPath as string, runArgs, { maxBuffer: 16 * MiB })
    if (stderr.trim() !== '') throw new Error(`wrk: ${stderr.trim().slice(0, 500)}`)
    return stdout
  }
  if (load.warmUp > 0) await wrkRun([...args, `-d${load.warmUp}s`, url, ...scriptArgs(load.warmUpArgs ?? load.args)])
  const stdout = await wrkRun([...args, `-d${load.seconds}s`, url, ...scriptArgs(load.args)])
  const errors = wrkErrors(stdout)
  if (errors !== null) console.error(`  ${url}: ${errors}`)
  const transfer = /Transfer\/sec:\s+([\d.]+)([KMG]?)B/.exec(stdout)
  const bytesPerSecond = transfer === null ? NaN : Number(transfer[1]) * { '': 1, K: 1024, M: MiB, G: 1024 * MiB }[transfer[2] as '' | 'K' | 'M' | 'G']
  const rate = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN)
  const total = Number(/(\d+) requests in/.exec(stdout)?.[1] ?? NaN)
  const failed = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0)
  return { rate, okRate: total > 0 ? rate * (total - failed) / total : rate, requests: total, bytesPerSecond, errors }
}

/** The start of a wrk script whose threads each know their number, `tid` (0, 1). */
const numberedThreads = `
local threads = 0
function setup (thread)
  thread:set("tid", threads)
  threads = threads + 1
end
`

/**
 * A wrk script for PUTs of 1 KiB to new keys: each request one key of its
 * own, `<prefix><thread>-<n>` (the prefix is the script's argument).
 */
export const putScript = `${numberedThreads}
function init (args)
  prefix = args[1] .. tid .. "-"
  body = string.rep("x", 1024)
  n = 0
end
function request ()
  n = n + 1
  return wrk.format("PUT", prefix .. n, nil, body)
end
`

/**
 * A wrk script for PUTs of 1 KiB signed beforehand, one key each: `requests`
 * (path and headers, as signed; Host is wrk's own, the same) are taken in
 * turn, thread t taking every second one from t, and taken again from the
 * start when all are used. They travel as one string of tab-separated lines
 * (a table of tens of thousands of strings is more constants than LuaJIT
 * takes in one chunk).
 */
export function signedPutScript (requests: Array<{ path: string, headers: Record<string, string> }>): string {
  const lines = requests.map(r => [r.path, ...Object.entries(r.headers).filter(([name]) => name.toLowerCase() !== 'host').flat()].join('\t'))
  if (lines.some(line => /[\n\]]/.test(line))) throw new Error('a signed request the script cannot carry')
  return `${numberedThreads}
function init (args)
  requests = {}
  for line in ([[
${lines.join('\n')}
]]):gmatch("[^\\n]+") do
    local fields = {}
    for field in line:gmatch("[^\\t]+") do fields[#fields + 1] = field end
    local headers = {}
    for i = 2, #fields, 2 do headers[fields[i]] = fields[i + 1] end
    requests[#requests + 1] = { fields[1], headers }
  end
  body = string.rep("x", 1024)
  n = tid + 1
end
function request ()
  local r = requests[n]
  n = n + 2
  if n > #requests then n = tid + 1 end
  return wrk.format("PUT", r[1], r[2], body)
end
`
}
