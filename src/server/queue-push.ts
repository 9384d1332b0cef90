/**
 * Push delivery of queues (`serve --queue-push <queue>=<url>`), for an app
 * without a pull loop: the server pulls the queue itself and POSTs each
 * batch to the app as JSON,
 *
 *     { "queue": "photo-events",
 *       "messages": [{ "id": "…", "timestamp_ms": 1767225600000, "attempts": 1,
 *                      "body": { "account": "…", "action": "PutObject", … } }] }
 *
 * An answer with a 2xx status acknowledges the whole batch; any other
 * answer, a refused connection or no answer within the timeout retries
 * every message of the batch after a back-off that doubles with its
 * attempts (1 s, 2 s, 4 s, … at most 5 minutes). Delivery is at least once,
 * as through pull: an app should tell a message seen twice by its `id`.
 *
 * The queue is polled every second while it is empty, at once again after
 * a batch was delivered. Only one process (the server, or a cluster's
 * primary) pushes, as only one sweeps. A queue that does not exist (yet)
 * is looked up again at each poll, so it may be created after the server
 * started.
 */
import type { BucketRegistry, Queues as QueuesClass } from '../bucket/index.js'
import { DEFAULT_BATCH_SIZE, DEFAULT_VISIBILITY_TIMEOUT_MS, Queues, isValidQueueName } from '../bucket/index.js'

export interface QueuePush {
  queue: string
  url: string
}

/**
 * `<queue>=<url>` → the push it asks for; throws with what is wrong, naming
 * the queue (or, when there is no queue name, `where`: the spec's place
 * among those given) and never repeating any of the spec's text: the URL,
 * or a fragment of one, may hold a secret. A URL holding credentials is
 * refused: fetch will not send a request to one (the push could never
 * deliver), and each failure's log line would carry the password.
 */
export function parseQueuePush (spec: string, where = 'the value'): QueuePush {
  const at = spec.indexOf('=')
  const queue = at === -1 ? '' : spec.slice(0, at)
  const url = at === -1 ? '' : spec.slice(at + 1)
  if (!isValidQueueName(queue)) {
    throw new Error(`${where}: expected <queue>=<url> with a queue name of lowercase letters, digits and hyphens`)
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new Error(`queue "${queue}": what follows = is not a URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`queue "${queue}": the URL must be http: or https:`)
  if (parsed.username !== '' || parsed.password !== '') {
    throw new Error(`queue "${queue}": the URL must not hold credentials (user:password@): fetch refuses to send them, so no batch could be delivered`)
  }
  return { queue, url: parsed.href }
}

/** The retry delay of a message after `attempts` failed deliveries, in seconds. */
export function pushBackoffSeconds (attempts: number): number {
  return Math.min(300, 2 ** Math.max(0, attempts - 1))
}

export interface QueuePushOptions {
  /** How often an empty queue is polled (ms); default 1000. */
  pollMs?: number
  /** How long the app may take to answer a batch (ms); default 30 s. */
  timeoutMs?: number
  /** Hears of each failed delivery (for the log). */
  onFailure?: (push: QueuePush, reason: string) => void
  /** How long a stop waits for a delivery in flight to be answered before it cuts it (ms); default 5 s (`pushStopGraceMs`). */
  stopGraceMs?: number
}

/** A stop's grace for a delivery in flight: half the drain timeout (seconds), at most 5 s, so the cut batch is settled before the drain ends. */
export function pushStopGraceMs (drainTimeout?: number): number {
  return drainTimeout === undefined ? 5000 : Math.min(5000, drainTimeout * 500)
}

/**
 * The log's warning for a failed delivery, naming the app by its origin
 * alone: a webhook's path or query often carries its token (the queue
 * names which push failed; credentials are refused as the URL is parsed).
 */
export function pushFailureLogger (log: { warn: (fields: object, message: string) => void }): NonNullable<QueuePushOptions['onFailure']> {
  return (push, reason) => {
    log.warn({ queue: push.queue, origin: new URL(push.url).origin, reason }, 'queue push failed; the batch will be retried')
  }
}

/**
 * Stops a push: `stop()` gives a delivery in flight its grace; `stop(true)`,
 * a forced stop (a second signal, a drain timeout), cuts it at once, a grace
 * already running too, so the process exits with the batch released rather
 * than leased until its visibility timeout ends.
 */
export type StopQueuePush = (cutNow?: boolean) => Promise<void>

/**
 * Starts pushing each queue of `pushes`; the function returned stops: no
 * batch is pulled after it, and a delivery in flight has `stopGraceMs` to
 * be answered, then is cut, so a stop never waits long for a slow app. A
 * cut batch is visible again at once and its attempt is taken back: the
 * app gave no verdict, so with `max_retries: 0` it is still delivered,
 * by the next process that pushes.
 */
export function startQueuePush (registry: BucketRegistry, pushes: QueuePush[], options: QueuePushOptions = {}): StopQueuePush {
  const queues: QueuesClass = new Queues(registry)
  const pollMs = options.pollMs ?? 1000
  const timeoutMs = options.timeoutMs ?? 30_000
  let stopped = false
  const stopping = new AbortController()
  const timers = new Set<NodeJS.Timeout>()
  const running = new Set<Promise<void>>()

  const deliverOnce = async (push: QueuePush): Promise<boolean> => {
    const queue = await queues.byName(push.queue)
    if (queue === undefined) return false
    // Nothing more is taken once stopping: a batch leased now would only be cut.
    if (stopped) return false
    const consumer = queue.consumers[0]
    const { messages } = await queues.pull(queue, consumer?.settings.batch_size ?? DEFAULT_BATCH_SIZE, Math.max(timeoutMs * 2, consumer?.settings.visibility_timeout_ms ?? DEFAULT_VISIBILITY_TIMEOUT_MS))
    if (messages.length === 0) return false
    const batch = {
      queue: queue.queue_name,
      messages: messages.map(m => ({ id: m.id, timestamp_ms: m.timestamp_ms, attempts: m.attempts, body: JSON.parse(m.body) as unknown }))
    }
    let failure: string | null = null
    /** Cut by the stop before the app answered: no verdict. */
    let cut = false
    try {
      const answer = await fetch(push.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch), signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal]) })
      await answer.arrayBuffer().catch(() => undefined)
      if (answer.status < 200 || answer.status > 299) failure = `answered ${answer.status}`
    } catch (err) {
      failure = (err as Error).message
      cut = stopping.signal.aborted
    }
    if (failure === null) {
      await queues.settle(queue, messages.map(m => m.lease_id), [])
      return true
    }
    if (cut) {
      await queues.settle(queue, [], messages.map(m => ({ leaseId: m.lease_id, delaySeconds: 0, uncounted: true })))
      return false
    }
    options.onFailure?.(push, failure)
    await queues.settle(queue, [], messages.map(m => ({ leaseId: m.lease_id, delaySeconds: pushBackoffSeconds(m.attempts) })))
    return false
  }

  const schedule = (push: QueuePush, delay: number): void => {
    if (stopped) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      const run = deliverOnce(push)
        .catch(err => { options.onFailure?.(push, (err as Error).message); return false })
        .then(delivered => { schedule(push, delivered ? 0 : pollMs) })
      running.add(run)
      void run.finally(() => running.delete(run))
    }, delay)
    timers.add(timer)
  }
  for (const push of pushes) schedule(push, 0)

  let endGrace = (): void => {}
  const graceOver = new Promise<void>(resolve => { endGrace = resolve })
  let stop: Promise<void> | undefined
  return async (cutNow = false) => {
    if (cutNow) endGrace()
    stop ??= (async () => {
      stopped = true
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      const settled = Promise.allSettled([...running])
      const grace = setTimeout(endGrace, options.stopGraceMs ?? pushStopGraceMs())
      await Promise.race([settled, graceOver])
      clearTimeout(grace)
      stopping.abort(new Error('the server is stopping'))
      await settled
    })()
    await stop
  }
}
