/**
 * Sending a stored body whose stream takes its chunks back (a store's
 * `RecyclingStream`): each chunk is written to the response and handed back
 * once its write has completed, so the store reads the next bytes into
 * memory that is already mapped instead of a fresh buffer per chunk (what
 * large GETs and ranges spend most of their time on otherwise).
 *
 * The reply is taken over from Fastify (`hijack`) at the first chunk and
 * answered with the status and headers the route set: the same answer
 * `reply.send(stream)` gives, with the same back-pressure (the stream
 * pauses while the socket's buffer is full). Fastify's response listeners
 * (the request log) still run when the response finishes. A stream that
 * fails before its first chunk is thrown to the route (Fastify's error
 * answer); one that fails after the headers went out destroys the
 * connection, as Fastify does: the client sees a short body, never a
 * wrong one.
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { RecyclingStream } from '../bucket/index.js'

export async function sendRecycling (reply: FastifyReply, stream: RecyclingStream): Promise<void> {
  const res = reply.raw
  await pipeRecycling(res, stream, () => {
    reply.hijack()
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, typeof value === 'number' ? String(value) : value)
    res.writeHead(reply.statusCode)
  })
}

/**
 * Writes `stream` to `res`, chunk by chunk, handing each chunk back once
 * written; `writeHead` sends the status and headers at the first chunk (or
 * the end). Rejects with the stream's error only when it fails before that.
 */
export async function pipeRecycling (res: ServerResponse, stream: RecyclingStream, writeHead: () => void): Promise<void> {
  let started = false
  /** The answer is begun at the first chunk: a stream failing before it still gets an error answer. */
  const start = (): void => {
    if (started) return
    started = true
    writeHead()
  }
  await new Promise<void>((resolve, reject) => {
    const detach = (): void => {
      stream.off('data', onData)
      stream.off('end', onEnd)
      stream.off('error', onError)
      res.off('drain', onDrain)
      res.off('close', onClose)
    }
    const done = (): void => {
      detach()
      resolve()
    }
    const onData = (chunk: Buffer): void => {
      start()
      // Handed back only after the socket took every byte of it.
      const more = res.write(chunk, err => { if (err == null) stream.recycle(chunk) })
      if (!more) stream.pause()
    }
    const onEnd = (): void => {
      start()
      res.end()
      done()
    }
    const onError = (err: Error): void => {
      if (started) {
        res.destroy(err)
        done()
        return
      }
      detach()
      reject(err)
    }
    const onDrain = (): void => { stream.resume() }
    const onClose = (): void => {
      // The client went away (or the answer ended): release the body's files.
      if (!stream.destroyed) stream.destroy()
      if (!started) started = true // nothing more to answer
      done()
    }
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    res.on('drain', onDrain)
    res.on('close', onClose)
  })
}
