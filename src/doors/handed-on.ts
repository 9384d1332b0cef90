/**
 * A part of a port's app that is built at its first request: an app of its
 * own, to which the port's app hands every request under a prefix whole
 * (routed and hooked there, its body not yet read). app.ts builds the
 * management API so: a hundred routes that most servers never answer,
 * which cost every worker's start about 80 ms of CPU and its memory a few
 * MiB (docs/benchmarks.md).
 *
 * The port's app keeps doing for a handed request what it does for every
 * request: the connection's order, its guards, the request's log line and
 * its count for the metrics. So the inner app writes no request line
 * (`HandedLog`), takes the port's request id (`handedId`), and names the
 * operation on the port's request (`handedFrom`).
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify'

/** The port's request of each request handed on, by its raw request. */
const handed = new WeakMap<IncomingMessage, FastifyRequest>()

/** The port app's request a raw request was handed on from; undefined when it was not. */
export function handedFrom (raw: IncomingMessage): FastifyRequest | undefined {
  return handed.get(raw)
}

/** The inner app's `genReqId`: the id the port's app gave the request, so every line about it names one id. */
export function handedId (raw: IncomingMessage): string {
  return handed.get(raw)?.id ?? randomUUID()
}

/** The inner app's log controller: the port's app writes the request's line; its other lines (stream errors) stay. */
export class HandedLog extends LogController {
  override incomingRequest (): void {}
  override requestCompleted (): void {}
}

/**
 * Routes every method of `prefix` and everything below it in `scope` to
 * the app `build` makes, built (and made ready) at the first such request
 * and closed with `scope`. A build that fails is answered by `fail` and
 * tried again at the next request.
 */
export function handOn (scope: FastifyInstance, prefix: string, build: () => Promise<FastifyInstance>, fail: (reply: FastifyReply, err: unknown) => void): void {
  let inner: Promise<FastifyInstance> | null = null
  const open = async (): Promise<FastifyInstance> => {
    inner ??= build().then(async app => { await app.ready(); return app }).catch(err => {
      inner = null
      throw err
    })
    return await inner
  }
  const hand = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    let app: FastifyInstance
    try {
      app = await open()
    } catch (err) {
      fail(reply, err)
      return
    }
    handed.set(request.raw, request)
    reply.hijack()
    app.routing(request.raw, reply.raw)
  }
  // Handed on before the body is read: the inner app parses it as its routes say.
  for (const url of [prefix, `${prefix}/*`]) {
    scope.route({ method: scope.supportedMethods, url, exposeHeadRoute: false, onRequest: hand, handler: hand })
  }
  scope.addHook('onClose', async () => {
    const app = await inner?.catch(() => null)
    await app?.close()
  })
}
