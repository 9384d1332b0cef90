/**
 * One budget per process for the bytes of request bodies held in memory at
 * once: the few bodies the doors read whole before using them (S3's XML
 * documents, the routes' bulk-delete and mpu-complete JSON, the management
 * API's JSON). Each of those is capped on its own (2 MiB, 2 MiB, 1 MiB), but
 * not in total: 1,000 connections each sending 2 MB of a bulk delete and then
 * stalling took two workers from 64 MiB of RSS each to 1.1 and 0.9 GiB
 * (177 and 173 MiB with this budget). Streamed bodies
 * (object PUTs, parts, form files) never pass through here.
 *
 * A door takes a `BodyHold` per body, takes each chunk from it before
 * keeping the chunk, and releases the hold in a `finally` once the buffer is
 * dropped (parsed, refused, cut off, timed out), so the budget cannot leak.
 * A chunk the budget has no room for is refused, not waited for: the door
 * answers 503 with its own "slow down" code and `Retry-After: 1`, before it
 * reads more, and closes the connection.
 */

/**
 * 64 MiB: 32 bodies of the largest size (2 MiB) buffered at once per
 * process, and thousands of the usual few-KiB ones, while a flood of stalled
 * bodies adds no more than that (and the refused chunks' sockets) to a
 * worker's memory.
 */
export const BODY_BUDGET_BYTES = 64 * 1024 * 1024

/** What one body holds of the budget; `release` gives it all back, once. */
export interface BodyHold {
  /** Takes `bytes` more; false (nothing taken) when the budget has no room for them. */
  take: (bytes: number) => boolean
  release: () => void
}

export class BodyBudget {
  #limit: number
  #held = 0

  constructor (limit = BODY_BUDGET_BYTES) {
    this.#limit = limit
  }

  /** Bytes held now, by every body still buffered. */
  get held (): number {
    return this.#held
  }

  get limit (): number {
    return this.#limit
  }

  /** A new limit (tests lower it to fill the budget with a few small bodies); what is held stays held. */
  resize (limit: number): void {
    this.#limit = limit
  }

  hold (): BodyHold {
    let mine = 0
    return {
      take: (bytes: number): boolean => {
        if (this.#held + bytes > this.#limit) return false
        this.#held += bytes
        mine += bytes
        return true
      },
      release: (): void => {
        this.#held -= mine
        mine = 0
      }
    }
  }
}

/** The process's one budget: every door of a worker shares it. */
export const bodyBudget = new BodyBudget()

/** What a body read whole may hold, and what each refusal is. */
export interface HeldBodyLimits {
  /** Largest body in bytes; past it, `tooLarge()` is thrown. */
  bytes: number
  tooLarge: () => Error
  /** Thrown when the process's budget has no room for the next chunk (the door's 503). */
  noRoom: () => Error
}

/**
 * Reads `source` whole within `limits` and the process's budget, and runs
 * `use` on its bytes while they are held; they go back to the budget
 * whatever happens (used, refused, cut off: the stream fails).
 */
export async function withHeldBody<T> (source: AsyncIterable<Uint8Array>, limits: HeldBodyLimits, use: (body: Buffer) => T): Promise<T> {
  const hold = bodyBudget.hold()
  try {
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of source) {
      size += chunk.length
      if (size > limits.bytes) throw limits.tooLarge()
      if (!hold.take(chunk.length)) throw limits.noRoom()
      // A copy: a decoding source (S3's aws-chunked) may hand out the same memory again for its next chunk.
      chunks.push(Buffer.from(chunk))
    }
    return use(Buffer.concat(chunks, size))
  } finally {
    hold.release()
  }
}
