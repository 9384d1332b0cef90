/**
 * What every request of the doors costs and answers, counted for the
 * metrics endpoint (docs/operations.md lists the metrics): requests by door,
 * operation and status, their durations, the bytes they moved, and the
 * requests in flight.
 *
 * Labels stay few: a door (`http`, `s3`, `mgmt`, `console`), an operation
 * the door names from a closed set (`GetObject`, `ListObjects`, ...; the
 * management API and the console by method and route pattern), never a
 * bucket or a key. A request no door named (refused before its route ran,
 * a URL no route takes, or before Fastify saw it: `refused`) is `other`.
 *
 * Cost: a request pays a few array and map updates and one 'close'
 * listener (no label object: its series is made once). The counts are plain numbers in a series made once per
 * (door, operation) and turned into the Prometheus format only when scraped
 * (src/server/metrics.ts); prom-client's own label lookups cost microseconds
 * a call, more than a small GET's whole share of the budget. The duration is
 * Fastify's own (`reply.elapsedTime`, from the clock reads it makes anyway).
 * Everything is taken when the answer closes: the answer's end, or the
 * connection's (a client that went away counts with status `aborted`).
 *
 * Bytes are the connection's, headers included: what was read from and
 * written to the socket since the previous answer on it closed, so each
 * byte counts once, towards the request whose answer follows it (requests
 * on one connection are answered in order, server/connection.ts).
 */
import type { ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'

/** The doors, as the metrics name them. */
export type DoorName = 'http' | 's3' | 'mgmt' | 'console'

/** The ports, as the in-flight gauge names them (the HTTP port serves the http, mgmt and console doors). */
export type PortName = 'http' | 's3'

declare module 'fastify' {
  interface FastifyRequest {
    /** The operation the door named the request for the metrics, from its closed set; null: none (`other`). */
    operation: string | null
    /** The door of the request when it is not its port's own (the management API and the console on the HTTP port). */
    door: DoorName | null
  }
}

/** Upper bounds, in seconds, of the request duration histogram's buckets. */
export const durationBuckets: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** The status label of a request whose connection closed before its answer was complete. */
export const ABORTED = 0

/** The counts of one (door, operation). */
export class RequestSeries {
  /** Requests by status (ABORTED: cut short). */
  readonly statuses = new Map<number, number>()
  /** Requests by duration bucket (`durationBuckets`, then one past the last bound); not cumulative. */
  readonly durations = new Float64Array(durationBuckets.length + 1)
  /** Seconds, summed. */
  durationSum = 0
  received = 0
  sent = 0

  constructor (readonly door: DoorName, readonly operation: string) {}

  record (status: number, seconds: number, received: number, sent: number): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1)
    let bucket = 0
    while (bucket < durationBuckets.length && seconds > durationBuckets[bucket]) bucket++
    this.durations[bucket]++
    this.durationSum += seconds
    this.received += received
    this.sent += sent
  }
}

/** What was counted of each connection's bytes, as of its last answer. */
interface Counted { read: number, written: number }

/** The counts of one process: every series, and the requests in flight on each port. */
export class RequestMeter {
  readonly #series = new Map<DoorName, Map<string, RequestSeries>>()
  readonly inFlight: Record<PortName, number> = { http: 0, s3: 0 }

  /** The series of (door, operation), made on first use. */
  series (door: DoorName, operation: string): RequestSeries {
    let doorSeries = this.#series.get(door)
    if (doorSeries === undefined) this.#series.set(door, doorSeries = new Map())
    let series = doorSeries.get(operation)
    if (series === undefined) doorSeries.set(operation, series = new RequestSeries(door, operation))
    return series
  }

  /** Every series made so far. */
  * all (): Iterable<RequestSeries> {
    for (const doorSeries of this.#series.values()) yield * doorSeries.values()
  }

  /** What the request log of a port's app calls as each request starts (doors/request-log.ts). */
  port (name: PortName): PortMeter {
    return new PortMeter(this, name)
  }
}

/** The counting of one port's requests. */
export class PortMeter {
  readonly #door: DoorName
  readonly #counted = new WeakMap<Socket, Counted>()

  constructor (readonly meter: RequestMeter, readonly name: PortName) {
    this.#door = name
  }

  started (reply: FastifyReply): void {
    this.meter.inFlight[this.name]++
    // `on`, not `once`: 'close' comes once anyway, and `once` would make two more objects per request.
    reply.raw.on('close', () => { this.finished(reply) })
  }

  finished (reply: FastifyReply): void {
    const request: FastifyRequest = reply.request
    this.answered(reply.raw, request.raw.socket as Socket | null | undefined, request.door ?? this.#door, request.operation ?? 'other', reply.elapsedTime / 1000)
  }

  /** A request taken (in flight until `answered`, or `dropped` when it is handed on uncounted). */
  began (): void {
    this.meter.inFlight[this.name]++
  }

  dropped (): void {
    this.meter.inFlight[this.name]--
  }

  /** Counts a request whose answer closed, `seconds` after it began. */
  answered (res: ServerResponse, socket: Socket | null | undefined, door: DoorName, operation: string, seconds: number): void {
    this.meter.inFlight[this.name]--
    this.#record(this.meter.series(door, operation), res.writableFinished ? res.statusCode : ABORTED, seconds, socket)
  }

  /**
   * Counts a request answered before any door saw it (refused by Node's
   * parser, an `Expect` the server cannot meet), under `other`, once its
   * answer is written. It was never in flight, and its arrival is not
   * known: its duration counts as 0.
   */
  refused (socket: Socket | null | undefined, status: number): void {
    this.#record(this.meter.series(this.#door, 'other'), status, 0, socket)
  }

  #record (series: RequestSeries, status: number, seconds: number, socket: Socket | null | undefined): void {
    let received = 0
    let sent = 0
    // A socket of `app.inject` counts nothing.
    if (typeof socket?.bytesRead === 'number') {
      const read = socket.bytesRead
      const written = socket.bytesWritten
      let counted = this.#counted.get(socket)
      if (counted === undefined) this.#counted.set(socket, counted = { read: 0, written: 0 })
      received = read - counted.read
      sent = written - counted.written
      counted.read = read
      counted.written = written
    }
    series.record(status, seconds, received, sent)
  }
}
