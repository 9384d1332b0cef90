/**
 * A part of a port's app that is built at its first request: an app of its
 * own, to which the port's app hands every request under a prefix whole
 * (routed and hooked there, its body not yet read), whatever its method.
 * app.ts builds the management API so: a hundred routes that most servers
 * never answer, which cost every worker's start about 80 ms of CPU and its
 * memory a few MiB (docs/benchmarks.md).
 *
 * The port's app keeps doing for a handed request what it does before any
 * route runs: the connection's order, its guards, and the request's count
 * for the metrics (the inner app names the operation on the port's
 * request). The inner app writes the request's log line, with the answer
 * it made, under the id the port's app gave the request (`handedId`) and
 * with the time since the port's app took it; the port's log writes none
 * (`handedFrom` gives both apps the port's side).
 */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** The port app's reply (and through it its request) of each request handed on, by its raw request. */
const handed = new WeakMap<IncomingMessage, FastifyReply>()

/**
 * The port app's reply to the request handed on as `raw`; undefined when it
 * was not handed on. Its `request` is the port's request (not the inner
 * app's), and its `elapsedTime` counts from when the port took it.
 */
export function handedFrom (raw: IncomingMessage): FastifyReply | undefined {
  return handed.get(raw)
}

/** The inner app's `genReqId`: the id the port's app gave the request, so every line about it names one id. */
export function handedId (raw: IncomingMessage): string {
  return handed.get(raw)?.request.id ?? randomUUID()
}

/**
 * Hands every request under `prefix` in `scope`, whatever its method, to
 * the app `build` makes, built (and made ready) at the first such request
 * and closed with `scope`. A build that fails is answered by `fail` and
 * tried again at the next request.
 */
export async function handOn (scope: FastifyInstance, prefix: string, build: () => Promise<FastifyInstance>, fail: (reply: FastifyReply, err: unknown) => void): Promise<void> {
  let inner: Promise<FastifyInstance> | null = null
  const open = async (): Promise<FastifyInstance> => {
    inner ??= build().then(async app => {
      try {
        await app.ready()
      } catch (err) {
        await app.close().catch(() => {})
        throw err
      }
      return app
    }).catch(err => {
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
    handed.set(request.raw, reply)
    reply.hijack()
    app.routing(request.raw, reply.raw)
  }
  await scope.register(async below => {
    // After every onRequest hook of the port's app (those added after this too), before the body is read (the
    // inner app parses it as its routes say); on every route and on the not-found handler below the prefix,
    // which is where a method the router does not know arrives.
    below.addHook('preParsing', async (request, reply) => { await hand(request, reply) })
    below.route({ method: below.supportedMethods, url: '/', exposeHeadRoute: false, handler: hand })
    below.route({ method: below.supportedMethods, url: '/*', exposeHeadRoute: false, handler: hand })
    below.setNotFoundHandler(hand)
  }, { prefix })
  scope.addHook('onClose', async () => {
    const app = await inner?.catch(() => null)
    await app?.close()
  })
}
