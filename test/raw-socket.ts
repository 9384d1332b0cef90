/**
 * Raw HTTP/1.1 over a socket, for what only a real connection shows
 * (pipelining, stalled bodies): open, read until, and the status lines.
 */
import { connect, type Socket } from 'node:net'

export async function open (port: number): Promise<Socket> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** Everything the server sends until it closes the connection or `until` holds (ms: give up). */
export async function received (socket: Socket, until: (text: string) => boolean, ms = 10_000): Promise<{ text: string, closed: boolean }> {
  return await new Promise(resolve => {
    let text = ''
    let closed = false
    const done = (): void => { clearTimeout(timer); socket.removeAllListeners('data'); resolve({ text, closed }) }
    const timer = setTimeout(done, ms)
    socket.on('data', chunk => { text += chunk.toString('latin1'); if (until(text)) done() })
    socket.once('close', () => { closed = true; done() })
  })
}

/** Sends `head` on a new connection and waits (up to `ms`) for the server to close it: what it answered, and after how long. */
export async function answeredUntilClosed (port: number, head: string, ms = 8000): Promise<{ text: string, closed: boolean, elapsed: number }> {
  const socket = await open(port)
  const started = Date.now()
  socket.write(head)
  const { text, closed } = await received(socket, () => false, ms)
  socket.destroy()
  return { text, closed, elapsed: Date.now() - started }
}

/** The status codes of the responses in `text`, in order. */
export function statuses (text: string): number[] {
  return [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map(m => Number(m[1]))
}
