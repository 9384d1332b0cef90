/**
 * Writing a stored body whose stream takes its chunks back (a store's
 * `RecyclingStream`) to a response: each chunk is written and handed back
 * once its write has completed, so the store reads the next bytes into
 * memory already mapped instead of a fresh buffer per chunk (what large
 * GETs and ranges spend most of their time on otherwise). Back-pressure is
 * the socket's: the stream pauses while its buffer is full. A stream that
 * fails before its first chunk rejects (the door answers the error); one
 * that fails after the headers went out destroys the connection: the
 * client sees a short body, never a wrong one, and the failure is kept
 * for the request's log line (`bodyFailure`), which then says so, at
 * `error`, instead of claiming the whole answer. A client that goes away
 * mid-body leaves the count of bytes handed over (`noteLeftByClient`): its line says
 * `incomplete`, at `info` (the client's choice, no fault).
 */
import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { RecyclingStream } from '../bucket/index.js'
import { logCutShortRequest, logLeftRequest, noteLeftByClient, type BodyFailure } from './request-log.js'

const failures = new WeakMap<ServerResponse, BodyFailure>()

/** The failure that cut `res` short after its headers went out, if one did. */
export function bodyFailure (res: ServerResponse): BodyFailure | undefined {
  return failures.get(res)
}

/**
 * Writes `stream` to `res`, chunk by chunk, handing each chunk back once
 * written; `writeHead` sends the status and headers at the first chunk (or
 * the end). Rejects with the stream's error only when it fails before that.
 */
export async function pipeRecycling (res: ServerResponse, stream: RecyclingStream, writeHead: () => void): Promise<void> {
  let started = false
  let sent = 0
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
      sent += chunk.byteLength
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
        if (!res.destroyed) failures.set(res, { err, sent })
        res.destroy(err)
        done()
        return
      }
      detach()
      reject(err)
    }
    const onDrain = (): void => { stream.resume() }
    const onClose = (): void => {
      // The client went away before the body's end: release the body's files, and say how much it was handed.
      noteLeftByClient(res, sent)
      if (!stream.destroyed) stream.destroy()
      if (!started) started = true // nothing more to answer
      done()
    }
    stream.on('data', onData)
    stream.on('end', onEnd)
    stream.on('error', onError)
    res.on('drain', onDrain)
    // First of the response's close listeners: a listener that writes the request's line (reads-beside.ts) finds the count noted.
    res.prependListener('close', onClose)
  })
}

/**
 * Sends `stream` through Fastify's `reply`: the reply is taken over
 * (`hijack`) at the first chunk and answered with the status and headers
 * the route set, the same answer `reply.send(stream)` gives. Fastify's
 * response listeners (the request log) still run when the response
 * finishes; a body cut short never finishes, so its line is written here.
 * A stream that fails before its first chunk is thrown to the route
 * (Fastify's error answer).
 */
export async function sendRecycling (reply: FastifyReply, stream: RecyclingStream): Promise<void> {
  const res = reply.raw
  await pipeRecycling(res, stream, () => {
    reply.hijack()
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, typeof value === 'number' ? String(value) : value)
    res.writeHead(reply.statusCode)
  })
  const failure = bodyFailure(res)
  if (failure !== undefined) {
    logCutShortRequest(reply.request, reply, failure)
    return
  }
  // Fastify writes the line of an answer that finishes; one whose client goes away first (mid-body, or with the last bytes
  // still on their way) never finishes, and its line is written here, once the response has closed.
  if (res.closed) {
    if (!res.writableFinished) logLeftRequest(reply.request, reply)
  } else {
    res.once('close', () => { if (!res.writableFinished) logLeftRequest(reply.request, reply) })
  }
}
