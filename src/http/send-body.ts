/**
 * Sending a stored body whose stream takes its chunks back (a store's
 * `RecyclingStream`, written by doors/recycling-body.ts) through Fastify's
 * reply: the reply is taken over (`hijack`) at the first chunk and
 * answered with the status and headers the route set, the same answer
 * `reply.send(stream)` gives. Fastify's response listeners (the request
 * log) still run when the response finishes. A stream that fails before
 * its first chunk is thrown to the route (Fastify's error answer).
 */
import type { FastifyReply } from 'fastify'
import type { RecyclingStream } from '../bucket/index.js'
import { pipeRecycling } from '../doors/recycling-body.js'

export async function sendRecycling (reply: FastifyReply, stream: RecyclingStream): Promise<void> {
  const res = reply.raw
  await pipeRecycling(res, stream, () => {
    reply.hijack()
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, typeof value === 'number' ? String(value) : value)
    res.writeHead(reply.statusCode)
  })
}
