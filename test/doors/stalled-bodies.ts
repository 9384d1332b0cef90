/**
 * What the doors' tests of the body budget share: a body sent in part and
 * left stalled on a socket of its own, one whole request and its answer, and
 * waiting on the process's budget.
 */
import type { Socket } from 'node:net'
import { bodyBudget } from '../../src/doors/body-budget.js'
import { open, received } from '../raw-socket.js'

/** Waits (up to `ms`) for the budget to hold what `predicate` wants; false when it never did. */
export async function budgetHolds (predicate: (held: number) => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms
  while (!predicate(bodyBudget.held)) {
    if (Date.now() > end) return false
    await new Promise(resolve => setTimeout(resolve, 10))
  }
  return true
}

/** Opens a connection, sends `head` and `part` of a longer body, and waits until the server holds `part`. */
export async function stalledBody (port: number, head: string, part: string): Promise<Socket> {
  const before = bodyBudget.held
  const socket = await open(port)
  socket.on('error', () => {})
  socket.write(head + part)
  if (!await budgetHolds(held => held >= before + part.length)) throw new Error(`the server never held the ${part.length} bytes sent`)
  return socket
}

export interface RawExchange { status: number, head: string, body: string, closed: boolean }

/** One whole request on a connection of its own: the answer's status, head and body, and whether the server closed the connection. */
export async function exchange (port: number, request: string): Promise<RawExchange> {
  const socket = await open(port)
  socket.on('error', () => {})
  socket.write(request)
  const { text, closed } = await received(socket, answerComplete, 3000)
  socket.destroy()
  const split = text.indexOf('\r\n\r\n')
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, split).toLowerCase(), body: text.slice(split + 4), closed }
}

/** Whether `text` holds a whole answer that keeps its connection open: its head and as much body as its Content-Length says (else wait for the close). */
function answerComplete (text: string): boolean {
  const split = text.indexOf('\r\n\r\n')
  const head = text.slice(0, split)
  const length = /\r\ncontent-length: (\d+)\r\n/i.exec(head)?.[1]
  return split !== -1 && length !== undefined && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(length) && !/\r\nconnection: close\r\n/i.test(head)
}

/** A request's head with its Content-Length, and the lines in `headers`. */
export function requestHead (method: string, path: string, headers: Record<string, string>, length: number): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${lines}content-length: ${length}\r\n\r\n`
}
