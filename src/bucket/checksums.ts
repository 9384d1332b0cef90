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
 * (~1.5 and ~1.2 GB/s, three times the AWS SDK's JavaScript ones).
 */
import { createHash } from 'node:crypto'
import zlib from 'node:zlib'
import { createCRC32, createCRC64, type IHasher } from 'hash-wasm'

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

/**
 * One WebAssembly instance per CRC serves every running checksum of the
 * process: each keeps its own few bytes of state and loads them around its
 * synchronous update (making an instance costs ~250 µs, a load ~0.1 µs).
 * The instances are made when the module loads, without a top-level await
 * (which would keep CommonJS callers from requiring the package): a
 * checksum started in the first moments keeps copies of its bytes until
 * they are ready.
 */
let wasmCrcs: Record<'crc32c' | 'crc64nvme', IHasher> | undefined
const wasmReady = Promise.all([createCRC32(0x82f63b78), createCRC64('9a6c9329ac4bc9b5')])
  .then(([crc32c, crc64nvme]) => { wasmCrcs = { crc32c, crc64nvme } })
wasmReady.catch(() => {}) // a failure is thrown by the digests that need them

function wasmRunning (algorithm: 'crc32c' | 'crc64nvme'): RunningChecksum {
  let state: Uint8Array | undefined
  let early: Uint8Array[] | undefined
  const apply = (hashers: NonNullable<typeof wasmCrcs>, data: Uint8Array): void => {
    const hasher = hashers[algorithm]
    state = (state === undefined ? hasher.init() : hasher.load(state)).update(data).save()
  }
  const settle = (hashers: NonNullable<typeof wasmCrcs>): void => {
    if (early === undefined) return
    for (const data of early) apply(hashers, data)
    early = undefined
  }
  return {
    update: data => {
      if (wasmCrcs === undefined) {
        (early ??= []).push(Buffer.from(data))
        return
      }
      settle(wasmCrcs)
      apply(wasmCrcs, data)
    },
    digest: async () => {
      await wasmReady
      const hashers = wasmCrcs as NonNullable<typeof wasmCrcs>
      settle(hashers)
      const hasher = hashers[algorithm]
      return Buffer.from((state === undefined ? hasher.init() : hasher.load(state)).digest('binary'))
    }
  }
}

export function runningChecksum (algorithm: HashAlgorithm): RunningChecksum {
  switch (algorithm) {
    case 'crc32': {
      let crc = 0
      return { update: data => { crc = zlib.crc32(data, crc) }, digest: async () => uint32Bytes(crc) }
    }
    case 'crc32c':
    case 'crc64nvme':
      return wasmRunning(algorithm)
    default: {
      const hash = createHash(algorithm)
      return { update: data => { hash.update(data) }, digest: async () => hash.digest() }
    }
  }
}

/** The checksum of `data` in one call. */
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


let crc32cTable: Uint32Array | undefined

/** CRC32C of a short input in one synchronous call (composite checksums, inside a store's critical section). */
function crc32cSync (data: Uint8Array): number {
  if (crc32cTable === undefined) {
    crc32cTable = new Uint32Array(256)
    for (let i = 0; i < 256; i++) {
      let c = i
      for (let k = 0; k < 8; k++) c = (c & 1) !== 0 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
      crc32cTable[i] = c >>> 0
    }
  }
  let crc = 0xffffffff
  for (const byte of data) crc = crc32cTable[(crc ^ byte) & 0xff] ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}

/**
 * S3's composite checksum of parts: the algorithm over their raw checksums,
 * concatenated (synchronous; CRC64NVME has no composite form).
 */
export function compositeOf (algorithm: Exclude<HashAlgorithm, 'crc64nvme'>, partChecksums: Buffer[]): Buffer {
  const data = Buffer.concat(partChecksums)
  switch (algorithm) {
    case 'crc32': return uint32Bytes(zlib.crc32(data))
    case 'crc32c': return uint32Bytes(crc32cSync(data))
    default: return createHash(algorithm).update(data).digest()
  }
}
