/**
 * What every S3 operation handler receives: the request, its reply, the
 * registry, the decoded query, the verified signature (null for anonymous
 * requests) and the bucket and key the URL names. Plus the two answers all
 * handlers share: an XML document, and the opened bucket or NoSuchBucket.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Bucket, BucketInfo, BucketRegistry, Principal } from '../bucket/index.js'
import { S3Error } from './errors.js'
import type { VerifiedSignature } from './sigv4.js'
import { xmlDocument } from './xml.js'

export interface S3Context {
  request: FastifyRequest
  reply: FastifyReply
  registry: BucketRegistry
  query: Record<string, string | string[]>
  signature: VerifiedSignature | null
  /** Who the request is (its key pair's principal; the admin in development mode); null for an anonymous read of a public bucket. */
  principal: Principal | null
  bucketName: string
  key: string
}

/** One query parameter's value (the first when repeated), or undefined. */
export function param (ctx: S3Context, name: string): string | undefined {
  const value = ctx.query[name]
  return Array.isArray(value) ? value[0] : value
}

export function has (ctx: S3Context, name: string): boolean {
  return ctx.query[name] !== undefined
}

export async function sendXml (ctx: S3Context, status: number, root: string, body: Record<string, unknown>): Promise<void> {
  await ctx.reply.code(status).type('application/xml').send(xmlDocument(root, body))
}

/** The bucket the request names, opened, with its settings; NoSuchBucket otherwise. */
export async function openNamedBucket (ctx: S3Context, name = ctx.bucketName): Promise<{ bucket: Bucket, info: BucketInfo }> {
  const info = await ctx.registry.info(name)
  const bucket = info === null ? null : await ctx.registry.open(name, info)
  if (info === null || bucket === null) throw new S3Error('NoSuchBucket', undefined, {})
  return { bucket, info }
}

/** The region the request was signed for (S3 answers with it), `us-east-1` for anonymous requests. */
export function signedRegion (ctx: S3Context): string {
  return ctx.signature?.scope.split('/')[1] ?? 'us-east-1'
}

/** The fixed owner of every bucket and object (one account per server). */
export const OWNER = { ID: 'fsbucket', DisplayName: 'fsbucket' }
