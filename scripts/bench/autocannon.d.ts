/** The part of autocannon's API that scripts/bench/http.ts uses (the package ships no types). */
declare module 'autocannon' {
  interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
    setupRequest?: (request: Request, context: Record<string, unknown>) => Request
  }
  interface Options {
    url: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
    method?: string
    headers?: Record<string, string>
    body?: string | Buffer
    requests?: Request[]
  }
  interface Histogram { average: number, mean: number, p50: number, p99: number, total: number }
  interface Result {
    requests: Histogram
    throughput: Histogram
    latency: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    '3xx'?: number
    duration: number
  }
  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
