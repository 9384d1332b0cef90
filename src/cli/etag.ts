/**
 * Whether some bytes are those of a stored object, by its etag: the MD5 of
 * the bytes, or for an object completed from N parts, the MD5 of the parts'
 * MD5s followed by `-N`. Mirror uses it to skip what is already there.
 *
 * The part size of a multipart object is not recorded, so the sizes that
 * give N parts and that an uploader would pick are tried (ours, the common
 * 5/8/16/64/100 MiB, and size/N rounded up to a MiB), all in one pass over
 * the bytes.
 */
import { createHash, type Hash } from 'node:crypto'

const MiB = 1024 * 1024

/** Do the `size` bytes of `bytes` (read once) make an object whose etag is `etag`? */
export async function bytesMatchEtag (bytes: AsyncIterable<Buffer>, size: number, etag: string, partSize: number): Promise<boolean> {
  const multipart = /^([0-9a-f]{32})-(\d+)$/.exec(etag)
  if (multipart === null) {
    const hash = createHash('md5')
    for await (const chunk of bytes) hash.update(chunk)
    return hash.digest('hex') === etag
  }
  const parts = Number(multipart[2])
  const perPart = Math.ceil(size / parts)
  const candidates = [...new Set([partSize, 5 * MiB, 8 * MiB, 16 * MiB, 64 * MiB, 100 * MiB, Math.ceil(perPart / MiB) * MiB, perPart])]
    .filter(p => p > 0 && Math.ceil(size / p) === parts)
  if (candidates.length === 0) return false
  const states = candidates.map(p => ({ partSize: p, filled: 0, part: createHash('md5') as Hash, digests: [] as Buffer[] }))
  for await (const chunk of bytes) {
    for (const state of states) {
      let rest = chunk
      while (rest.length > 0) {
        const take = Math.min(rest.length, state.partSize - state.filled)
        state.part.update(rest.subarray(0, take))
        state.filled += take
        rest = rest.subarray(take)
        if (state.filled === state.partSize) {
          state.digests.push(state.part.digest())
          state.part = createHash('md5')
          state.filled = 0
        }
      }
    }
  }
  return states.some(state => {
    const digests = state.filled > 0 ? [...state.digests, state.part.digest()] : state.digests
    return digests.length === parts && `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${parts}` === etag
  })
}
