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

/**
 * Everything the server sends until it closes the connection or `until`
 * holds (ms: give up). `until` sees the last `window` characters received
 * (all of them by default): a large body would make the whole text costly to
 * look at again on every chunk.
 */
export async function received (socket: Socket, until: (text: string) => boolean, ms = 10_000, window = Infinity): Promise<{ text: string, closed: boolean }> {
  return await new Promise(resolve => {
    const chunks: string[] = []
    let seen = ''
    let closed = false
    const done = (): void => { clearTimeout(timer); socket.removeAllListeners('data'); resolve({ text: chunks.join(''), closed }) }
    const timer = setTimeout(done, ms)
    socket.on('data', chunk => {
      const text = chunk.toString('latin1')
      chunks.push(text)
      seen = window === Infinity ? seen + text : (seen + text).slice(-window)
      if (until(seen)) done()
    })
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

/**
 * Sends `head` (a PUT asking `Expect: 100-continue` for a body longer than
 * what follows) `rounds` times, each on a new connection: once the 100 says
 * the route has begun to read the body, 1,000 bytes of it, then the client
 * goes. Resolves with the first answer each round got (its 100 Continue).
 */
export async function uploadsCutShort (port: number, head: string, rounds: number): Promise<string[]> {
  const first: string[] = []
  for (let round = 0; round < rounds; round++) {
    const socket = await open(port)
    socket.write(head)
    first.push((await received(socket, text => text.includes('\r\n\r\n'))).text)
    socket.write('x'.repeat(1000))
    await new Promise(resolve => setTimeout(resolve, 20))
    socket.destroy()
  }
  return first
}
