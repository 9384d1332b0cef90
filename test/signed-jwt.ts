/** Temporary credentials minted by the hosted service's client-side recipe, for tests (see src/bucket/signed-sessions.ts). */
import { createHash, createHmac } from 'node:crypto'

export const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** The recipe, step by step, as a client would follow it. */
export function mintBySignedJwt (parent: { accessKeyId: string, secretAccessKey: string }, claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }):
{ accessKeyId: string, secretAccessKey: string, sessionToken: string, jwt: string } {
  const signed = `${b64url(header)}.${b64url(claims)}`
  const jwt = `${signed}.${createHmac('sha256', parent.secretAccessKey).update(signed).digest('base64url')}`
  return {
    accessKeyId: parent.accessKeyId,
    secretAccessKey: createHash('sha256').update(jwt).digest('hex'),
    sessionToken: Buffer.from(`jwt/${jwt}`).toString('base64'),
    jwt
  }
}
