/**
 * Checksums the engine computes: the binding's digests (MD5, SHA-1,
 * SHA-256, SHA-384, SHA-512) and the CRCs S3 clients send (CRC32, CRC32C,
 * CRC64NVME), with one running interface, and the two ways S3 derives the
 * checksum of a multipart object from its parts:
 *
 *   - COMPOSITE: the algorithm over the concatenated raw part checksums,
 *     written `<base64>-<parts>` (S3's form for SHA-1, SHA-256, and CRC32 /
 *     CRC32C by default);
 *   - FULL_OBJECT: the CRC of the whole object, combined from the parts'
 *     CRCs and sizes without reading a byte again (S3's only form for
 *     CRC64NVME, a choice for CRC32 / CRC32C).
 *
 * Implementations, chosen by a benchmark on Node.js 20 (64 MiB in 64 KiB
 * chunks, one core): CRC32 is node:zlib's `crc32` (native, ~1.2-2.5 GB/s;
 * Node >= 20.15); CRC32C and CRC64NVME are hash-wasm's WebAssembly ones
 * (~1.5 and ~1.2 GB/s, three times the AWS SDK's JavaScript ones), with
 * byte-at-a-time tables where WebAssembly cannot run.
 */
import { createHash, hash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { createCRC32 as CreateCRC32, createCRC64 as CreateCRC64, IHasher } from 'hash-wasm'

let zlibCrc32: ((data: Uint8Array, value?: number) => number) | undefined

/** node:zlib's CRC32, the module loaded at the first one: a process that computes none does not hold it. */
function crc32 (data: Uint8Array, value?: number): number {
  zlibCrc32 ??= process.getBuiltinModule('node:zlib').crc32
  return zlibCrc32(data, value)
}

// hash-wasm's builds of one algorithm each: its main entry embeds every
// algorithm's WebAssembly, which cost about 7 MiB of memory once loaded and
// the two CRCs made (these two builds: 0.3 MiB); a server idles 3 to 4 MiB
// lower for it. Required on the first CRC32C or CRC64NVME (crcRunsSettled):
// most servers never see one, and loading them cost every worker ~50 ms.
const require = createRequire(import.meta.url)

/** The digests of the hosted binding (its `checksums` surface). */
export const bindingHashAlgorithms = ['md5', 'sha1', 'sha256', 'sha384', 'sha512'] as const
/** The CRCs S3 clients send: kept beside the binding's digests, an addition to its surface. */
export const crcAlgorithms = ['crc32', 'crc32c', 'crc64nvme'] as const
export const hashAlgorithms = [...bindingHashAlgorithms, ...crcAlgorithms] as const
export type HashAlgorithm = typeof hashAlgorithms[number]
export type CrcAlgorithm = typeof crcAlgorithms[number]

export const digestBytes: Record<HashAlgorithm, number> = {
  md5: 16, sha1: 20, sha256: 32, sha384: 48, sha512: 64, crc32: 4, crc32c: 4, crc64nvme: 8
}

export function isCrc (algorithm: HashAlgorithm): algorithm is CrcAlgorithm {
  return (crcAlgorithms as readonly string[]).includes(algorithm)
}

/** A checksum being computed over bytes as they flow. */
export interface RunningChecksum {
  update: (data: Uint8Array) => void
  /** The checksum, big-endian bytes for CRCs; call once, after the last update. */
  digest: () => Promise<Buffer>
}

function uint32Bytes (value: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(value >>> 0)
  return b
}

/** A CRC being computed, synchronously. */
interface CrcRun {
  update: (data: Uint8Array) => void
  digest: () => Buffer
}
type CrcMakers = Record<'crc32c' | 'crc64nvme', () => CrcRun>

/**
 * One WebAssembly instance per CRC serves every running checksum of the
 * process (making an instance costs ~250 µs). The instance holds the state
 * of the run that used it last; a run whose turn comes after another's
 * saves that one's state and loads its own. A run that has the instance to
 * itself, as a small body's does (one update, then the digest), never
 * saves or loads: for 1 KiB that is a quarter of the time.
 */
function webAssemblyRun (hasher: IHasher): () => CrcRun {
  /** The state each run keeps while another holds the instance (null: never updated, start afresh). */
  interface Run { saved: Uint8Array | null }
  let holder: Run | null = null
  const take = (run: Run): IHasher => {
    if (holder !== run) {
      if (holder !== null) holder.saved = hasher.save()
      if (run.saved === null) hasher.init()
      else hasher.load(run.saved)
      holder = run
    }
    return hasher
  }
  return () => {
    const run: Run = { saved: null }
    let digest: Buffer | undefined
    return {
      update: data => { take(run).update(data) },
      digest: () => {
        if (digest === undefined) {
          digest = Buffer.from(take(run).digest('binary'))
          holder = null
        }
        return digest
      }
    }
  }
}

/** Reflected CRC tables, one byte at a time: the fallback where WebAssembly cannot run (`node --jitless`), and short composites. */
const CRC32C_TABLE = new Uint32Array(256)
const CRC64_TABLE_LO = new Uint32Array(256)
const CRC64_TABLE_HI = new Uint32Array(256)
for (let i = 0; i < 256; i++) {
  let c = i
  let lo = i
  let hi = 0
  for (let k = 0; k < 8; k++) {
    c = (c & 1) !== 0 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
    const carry = lo & 1
    lo = ((lo >>> 1) | (hi << 31)) >>> 0
    hi = hi >>> 1
    if (carry !== 0) {
      lo = (lo ^ 0xac4bc9b5) >>> 0
      hi = (hi ^ 0x9a6c9329) >>> 0
    }
  }
  CRC32C_TABLE[i] = c >>> 0
  CRC64_TABLE_LO[i] = lo
  CRC64_TABLE_HI[i] = hi
}

/** Advances a CRC32C register (not inverted at either end) over `data`. */
function crc32cRegister (crc: number, data: Uint8Array): number {
  for (const byte of data) crc = CRC32C_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8)
  return crc
}

const tableRuns: CrcMakers = {
  crc32c: () => {
    let crc = 0xffffffff
    return { update: data => { crc = crc32cRegister(crc, data) }, digest: () => uint32Bytes(~crc) }
  },
  crc64nvme: () => {
    let lo = 0xffffffff
    let hi = 0xffffffff
    return {
      update: data => {
        for (const byte of data) {
          const i = (lo ^ byte) & 0xff
          lo = ((lo >>> 8) | (hi << 24)) ^ CRC64_TABLE_LO[i]
          hi = (hi >>> 8) ^ CRC64_TABLE_HI[i]
        }
      },
      digest: () => Buffer.concat([uint32Bytes(~hi), uint32Bytes(~lo)])
    }
  }
}

/**
 * The CRC implementations in use: the WebAssembly ones once made (begun by
 * the first CRC32C or CRC64NVME, not at module load), the tables where they
 * cannot be made.
 */
let crcRuns: CrcMakers | undefined
let crcRunsMade: Promise<void> | undefined

/** Begins making the WebAssembly CRCs, once; settles when `crcRuns` is known. */
async function crcRunsSettled (): Promise<void> {
  crcRunsMade ??= (async () => {
    try {
      const { createCRC32 } = require('hash-wasm/dist/crc32.umd.min.js') as { createCRC32: typeof CreateCRC32 }
      const { createCRC64 } = require('hash-wasm/dist/crc64.umd.min.js') as { createCRC64: typeof CreateCRC64 }
      const [crc32c, crc64nvme] = await Promise.all([createCRC32(0x82f63b78), createCRC64('9a6c9329ac4bc9b5')])
      crcRuns = { crc32c: webAssemblyRun(crc32c), crc64nvme: webAssemblyRun(crc64nvme) }
    } catch {
      crcRuns = tableRuns
    }
  })()
  await crcRunsMade
}

/**
 * Which CRC32C / CRC64NVME implementation runs: not yet made (loading), WebAssembly, or the tables.
 * @internal for test/bucket/checksums.test.ts, which imports it in a child process
 */
export function crcImplementation (): 'loading' | 'webassembly' | 'tables' {
  return crcRuns === undefined ? 'loading' : crcRuns === tableRuns ? 'tables' : 'webassembly'
}

/** A running CRC32C or CRC64NVME; one started while the implementation loads keeps copies of its bytes until it is known. */
function crcRunning (algorithm: 'crc32c' | 'crc64nvme'): RunningChecksum {
  if (crcRuns === undefined) void crcRunsSettled()
  let run: CrcRun | undefined
  let early: Uint8Array[] = []
  const started = (runs: CrcMakers): CrcRun => {
    if (run === undefined) {
      run = runs[algorithm]()
      for (const data of early) run.update(data)
      early = []
    }
    return run
  }
  return {
    update: data => {
      if (crcRuns === undefined) early.push(Buffer.from(data))
      else started(crcRuns).update(data)
    },
    digest: async () => {
      await crcRunsSettled()
      return started(crcRuns as CrcMakers).digest()
    }
  }
}

export function runningChecksum (algorithm: HashAlgorithm): RunningChecksum {
  switch (algorithm) {
    case 'crc32': {
      let crc = 0
      return { update: data => { crc = crc32(data, crc) }, digest: async () => uint32Bytes(crc) }
    }
    case 'crc32c':
    case 'crc64nvme':
      return crcRunning(algorithm)
    default: {
      const hash = createHash(algorithm)
      return { update: data => { hash.update(data) }, digest: async () => hash.digest() }
    }
  }
}

/**
 * The checksum of `data` in one call.
 * @internal for test/bucket/checksums.test.ts, which imports it in a child process
 */
export async function checksumOf (algorithm: HashAlgorithm, data: Uint8Array): Promise<Buffer> {
  const running = runningChecksum(algorithm)
  running.update(data)
  return await running.digest()
}

/** Reflected polynomials and widths of the CRCs (all start from and end XORed with all ones). */
const crcShape: Record<CrcAlgorithm, { width: bigint, poly: bigint }> = {
  crc32: { width: 32n, poly: 0xedb88320n },
  crc32c: { width: 32n, poly: 0x82f63b78n },
  crc64nvme: { width: 64n, poly: 0x9a6c9329ac4bc9b5n }
}

/** a(x) * b(x) mod P(x), bit-reflected (the top bit is x^0). */
function multiplyModP (a: bigint, b: bigint, width: bigint, poly: bigint): bigint {
  let m = 1n << (width - 1n)
  let product = 0n
  while (m !== 0n) {
    if ((a & m) !== 0n) {
      product ^= b
      if ((a & (m - 1n)) === 0n) break
    }
    m >>= 1n
    b = (b & 1n) !== 0n ? (b >> 1n) ^ poly : b >> 1n
  }
  return product
}

/** x^(8 * bytes) mod P(x): what appending `bytes` zero bytes does to a CRC register. */
function shiftOfBytes (bytes: number, width: bigint, poly: bigint): bigint {
  let power = 1n << (width - 2n) // x^1
  let result = 1n << (width - 1n) // x^0
  let n = BigInt(bytes) * 8n
  while (n > 0n) {
    if ((n & 1n) !== 0n) result = multiplyModP(power, result, width, poly)
    power = multiplyModP(power, power, width, poly)
    n >>= 1n
  }
  return result
}

/** The CRC of the concatenation of pieces, from each piece's CRC (big-endian bytes) and size. */
export function combineCrcs (algorithm: CrcAlgorithm, pieces: Array<{ crc: Buffer, size: number }>): Buffer {
  const { width, poly } = crcShape[algorithm]
  const shifts = new Map<number, bigint>()
  let crc = 0n
  for (const piece of pieces) {
    let shift = shifts.get(piece.size)
    if (shift === undefined) {
      shift = shiftOfBytes(piece.size, width, poly)
      shifts.set(piece.size, shift)
    }
    crc = multiplyModP(shift, crc, width, poly) ^ BigInt('0x' + piece.crc.toString('hex'))
  }
  return Buffer.from(crc.toString(16).padStart(Number(width / 4n), '0'), 'hex')
}


/**
 * S3's composite checksum of parts: the algorithm over their raw checksums,
 * concatenated (synchronous; CRC64NVME has no composite form).
 */
export function compositeOf (algorithm: Exclude<HashAlgorithm, 'crc64nvme'>, partChecksums: Buffer[]): Buffer {
  const data = Buffer.concat(partChecksums)
  switch (algorithm) {
    case 'crc32': return uint32Bytes(crc32(data))
    case 'crc32c': return uint32Bytes(~crc32cRegister(0xffffffff, data))
    default: return createHash(algorithm).update(data).digest()
  }
}

/**
 * SHA-256 of a short text or bytes, in hex: Node's one-call `crypto.hash`,
 * a fraction of `createHash`'s cost (its object) on a few hundred bytes,
 * which is what a request's token or signature check hashes.
 */
export function sha256Hex (data: string | Uint8Array): string {
  return hash('sha256', data, 'hex')
}

/** The same, as bytes (a bearer check compares digests in constant time). */
export function sha256 (data: string | Uint8Array): Buffer {
  return hash('sha256', data, 'buffer')
}
