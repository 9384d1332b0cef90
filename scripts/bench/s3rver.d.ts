/** The part of s3rver's API that scripts/bench/http.ts uses (the package ships no types). */
declare module 's3rver' {
  interface Options {
    address?: string
    port?: number
    directory: string
    silent?: boolean
    configureBuckets?: Array<{ name: string }>
  }
  export default class S3rver {
    constructor (options: Options)
    run (): Promise<{ port: number }>
  }
}
