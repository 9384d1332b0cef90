/**
 * AWS Signature Version 4, verified: the `Authorization` header and
 * presigned URLs (`X-Amz-Signature` in the query).
 *
 * The canonical request and the string to sign are built here from the
 * request's wire form, on every signed request; the tests hold them to what
 * @smithy/signature-v4 (the AWS SDK's own signer) computes for the same
 * request, and to AWS's worked examples. The signing key is AWS's chain of
 * four HMAC-SHA256 (secret, date, region, service, `aws4_request`), derived
 * here once per key pair and day: the signer's package, which did it
 * before, cost every worker a sixth of a second and 17 MB to load, for
 * four calls of node:crypto. Signatures are compared in constant time.
 *
 * What is checked, as S3 does:
 *   - the access key is known (InvalidAccessKeyId), the scope's service is
 *     `s3` and its date is the request's date (AuthorizationHeaderMalformed);
 *   - header auth: the request time (X-Amz-Date or Date) is within 15 minutes
 *     of the server's clock (RequestTimeTooSkewed), and x-amz-content-sha256
 *     is present (its value is signed as given; payload.ts verifies it);
 *   - presigned: X-Amz-Expires is a plain decimal (AuthorizationQueryParametersError
 *     "X-Amz-Expires should be a number" for `+60`, `0x10`, `1e3`, `60.0`),
 *     not negative ("X-Amz-Expires must be non-negative") nor over 604,800
 *     seconds (the same error, "...must be less than a week..."), and not
 *     past (AccessDenied "Request has expired", 403, which 0 always is);
 *     X-Amz-Date is at most 15 minutes ahead of the server's
 *     clock (AccessDenied "Request is not yet valid"), so a URL lives at most
 *     7 days from its signing time; other query parameters (checksum ones,
 *     response-* overrides) are signed like any other;
 *   - presigned: the payload hash the URL signs, if any, is the request's
 *     (presigned.ts);
 *   - `host` is among the signed headers, and so is every `x-amz-*` header
 *     sent but `x-amz-content-sha256` (AccessDenied, HeadersNotSigned);
 *   - a session token (`X-Amz-Security-Token`, header or query) goes to
 *     the lookup with the access key id: the lookup says whether it is
 *     good (temporary credentials, src/bucket/sessions.ts).
 * Any region is accepted (`auto`, `us-east-1`, ...): the signature covers the
 * one the client chose.
 *
 * The canonical URI is the path as it came on the wire (S3 clients do not
 * encode twice); when that does not verify, the path re-encoded the AWS way
 * from its decoded form is tried, for clients that send `~` or `!` raw.
 * Header values are signed as the client meant them: a value that came as
 * UTF-8 bytes (metadata such as `x-amz-meta-city: Zürich`, which curl and
 * several SDKs send as is and sign as those bytes) is tried read as UTF-8
 * when its Latin-1 reading (one character per byte, as Node.js gives it;
 * the AWS SDK for JavaScript signs Latin-1 characters so) does not verify.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { sha256Hex } from '../bucket/index.js'
import { decodeHeaderValue } from '../doors/request-metadata.js'
import { S3Error } from './errors.js'
import { presignedPayloadHash } from './presigned.js'
import { awsEncodePath, canonicalQuery } from './uri-encoding.js'

export const ALGORITHM = 'AWS4-HMAC-SHA256'
const AUTHORIZATION_PREFIX = `${ALGORITHM} `
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD'
/** Largest clock difference accepted for header auth (S3's). */
const MAX_SKEW_MS = 15 * 60 * 1000
/** Longest presigned URL lifetime (S3's: 7 days). */
const MAX_EXPIRES_SECONDS = 604_800

export interface S3Credential {
  accessKeyId: string
  secretAccessKey: string
}

/** What a verified request carries on to the payload decoder (chunk signatures chain from it). */
export interface VerifiedSignature {
  accessKeyId: string
  /**
   * The payload hash the signature covers: x-amz-content-sha256 as sent
   * (header auth), the presigned URL's X-Amz-Content-Sha256, else
   * UNSIGNED-PAYLOAD (presigned).
   */
  payloadHash: string
  longDate: string
  scope: string
  /** A key object: an HMAC made with one skips copying and checking the key's bytes (a third of its cost on a request's signature). */
  signingKey: KeyObject
  signature: string
}

/**
 * A header's value as it is signed: runs of spaces and tabs become one
 * space, and one at either end goes, as the SDK's signer does. Only those:
 * a value's other white space (U+00A0 arrives as a Latin-1 byte) is part of
 * what is signed, or `a\u00a0b` would pass for a request signed with `a b`.
 */
function canonicalHeaderValue (value: string): string {
  // Most values have nothing to trim or fold: they are signed as they are.
  if (!/[\t\r\n]| {2}|^ | $/.test(value)) return value
  return value.replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').replace(/^ | $/g, '')
}

/**
 * The canonical request of AWS Signature Version 4 for S3 (the path is
 * signed as sent, not encoded again), from the signed headers' names
 * (sorted, lower case) and their values. test/s3/sigv4.test.ts checks it
 * against @smithy/signature-v4, the AWS SDK's signer, over many requests.
 */
function canonicalRequest (method: string, path: string, query: Record<string, string | string[]>, signed: SignedHeaderList, values: string[], payloadHash: string): string {
  const { names } = signed
  let headers = ''
  for (let i = 0; i < names.length; i++) headers += `${names[i]}:${canonicalHeaderValue(values[i])}\n`
  return `${method}\n${path}\n${canonicalQuery(query)}\n${headers}\n${signed.list}\n${payloadHash}`
}

function stringToSign (longDate: string, scope: string, canonical: string): string {
  return `${ALGORITHM}\n${longDate}\n${scope}\n${sha256Hex(canonical)}`
}

/**
 * What clients send again and again, parsed once: the Credential field (the
 * same for every request of a client in a day) and the SignedHeaders list,
 * kept by their text. Bounded, first in first out. A scope also keeps the
 * signing key last derived for it (one HMAC chain per key pair and day, not
 * per request), with the secret it was derived from.
 */
class Parsed<T> {
  readonly #entries = new Map<string, T>()
  readonly #max: number
  constructor (max: number) { this.#max = max }
  get (text: string): T | undefined { return this.#entries.get(text) }
  set (text: string, value: T): T {
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value as string)
    this.#entries.set(text, value)
    return value
  }
}

interface Scope {
  credential: Credential
  signing: { secretAccessKey: string, key: KeyObject } | null
}

const scopes = new Parsed<Scope>(256)
const signedHeaderLists = new Parsed<SignedHeaderList>(256)

/**
 * The credential scope a Credential field names, parsed or known
 * (AuthorizationHeaderMalformed or AuthorizationQueryParametersError when
 * it is not one). Kept (`keep`) only once its access key is known, so that
 * requests naming unknown keys never push the known scopes out.
 */
function scopeOf (field: string, error: 'AuthorizationHeaderMalformed' | 'AuthorizationQueryParametersError'): Scope {
  return scopes.get(field) ?? { credential: parseCredential(field, error), signing: null }
}

/** The signed header names, sorted and each once (they normally come so), and as the canonical request lists them. */
interface SignedHeaderList {
  names: string[]
  list: string
}

function signedHeaderList (field: string): SignedHeaderList {
  const known = signedHeaderLists.get(field)
  if (known !== undefined) return known
  const names = sortedOnce(field.split(';'))
  return { names, list: names.join(';') }
}

/** Keeps what a request of a known access key parsed, for the next requests sending the same texts. */
function keep (credentialField: string, scope: Scope, signedField: string, signed: SignedHeaderList): void {
  if (scopes.get(credentialField) !== scope) scopes.set(credentialField, scope)
  if (signedHeaderLists.get(signedField) !== signed) signedHeaderLists.set(signedField, signed)
}

/** The scope's signing key for this secret: derived when the scope is new to it. */
function signingKeyOf (scope: Scope, secretAccessKey: string): KeyObject {
  if (scope.signing?.secretAccessKey === secretAccessKey) return scope.signing.key
  const { shortDate, region, service } = scope.credential
  // AWS's derivation: kDate = HMAC("AWS4" + secret, date), then the region, the service and "aws4_request" in turn.
  let key: Buffer = createHmac('sha256', `AWS4${secretAccessKey}`).update(shortDate, 'utf8').digest()
  for (const part of [region, service, 'aws4_request']) key = createHmac('sha256', key).update(part, 'utf8').digest()
  const signingKey = createSecretKey(key)
  scope.signing = { secretAccessKey, key: signingKey }
  return signingKey
}

/** Constant-time comparison of two hex signatures. */
export function signaturesEqual (a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8')
  const y = Buffer.from(b, 'utf8')
  return x.length === y.length && timingSafeEqual(x, y)
}

export function hmacHex (key: KeyObject, text: string): string {
  return createHmac('sha256', key).update(text, 'utf8').digest('hex')
}

/** The last X-Amz-Date read: requests in the same second carry the same one. */
let lastAmzDate: { text: string, date: Date | null } = { text: '', date: null }

/** `20260101T000000Z` → Date, or null. */
function parseAmzDate (value: string): Date | null {
  if (value === lastAmzDate.text) return lastAmzDate.date
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  const ms = m === null ? NaN : Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  // Date.UTC rolls an impossible field over (hour 30 is 06:00 the next day): only a date that reads back the same is one.
  const date = Number.isNaN(ms) || formatAmzDate(new Date(ms)) !== value ? null : new Date(ms)
  lastAmzDate = { text: value, date }
  return lastAmzDate.date
}

function formatAmzDate (date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')
}

interface Credential {
  accessKeyId: string
  shortDate: string
  region: string
  service: string
  /** `<yyyymmdd>/<region>/s3/aws4_request` */
  scope: string
}

function parseCredential (value: string, error: 'AuthorizationHeaderMalformed' | 'AuthorizationQueryParametersError'): Credential {
  const parts = value.split('/')
  if (parts.length !== 5 || parts[4] !== 'aws4_request' || !/^\d{8}$/.test(parts[1])) {
    throw new S3Error(error, 'The Credential is not <access key>/<yyyymmdd>/<region>/s3/aws4_request.')
  }
  if (parts[3] !== 's3') throw new S3Error(error, `The credential scope's service must be s3 (got ${parts[3]}).`)
  return { accessKeyId: parts[0], shortDate: parts[1], region: parts[2], service: parts[3], scope: parts.slice(1).join('/') }
}

export interface SignedRequest {
  method: string
  /** The path as it came on the wire (before `?`). */
  rawPath: string
  /** The raw query string (after `?`), or ''. */
  rawQuery: string
  headers: IncomingHttpHeaders
  /** The header lines as received (name, value, ...): a header sent on several lines is signed as their values joined with `,`. */
  rawHeaders?: string[]
}

/**
 * A signed header's value as SigV4 signs it. Node joins a header sent on
 * several lines with `, ` (a few of them it keeps as a list); SigV4 joins
 * the lines' trimmed values with `,`.
 */
function signedValue (request: SignedRequest, name: string): string | undefined {
  // Its own headers only: a signed name like `constructor` is a header that was not sent, not the object's.
  const value = Object.hasOwn(request.headers, name) ? request.headers[name] : undefined
  if (value === undefined) return undefined
  if (Array.isArray(value)) return value.map(line => line.trim()).join(',')
  const raw = request.rawHeaders
  if (raw === undefined || !value.includes(',')) return value
  const lines: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i].toLowerCase() === name) lines.push(raw[i + 1].trim())
  return lines.length > 1 ? lines.join(',') : value
}

/** Whether the query carries a presigned URL's signature (Signature Version 4's, or 2's, which is refused as S3 refuses it). */
export function isSignedQuery (query: Record<string, string | string[]>): boolean {
  return query['X-Amz-Signature'] !== undefined || query['X-Amz-Algorithm'] !== undefined || (query.AWSAccessKeyId !== undefined && query.Signature !== undefined)
}

/** How the request says it is authenticated. */
export function authenticationKind (request: Pick<SignedRequest, 'headers'>, query: Record<string, string | string[]>): 'header' | 'query' | 'anonymous' {
  if (request.headers.authorization !== undefined) return 'header'
  // A Signature Version 2 presigned URL among them: refused as S3 refuses it, not served as anonymous.
  return isSignedQuery(query) ? 'query' : 'anonymous'
}

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/**
 * S3 acts only on `x-amz-*` headers the signature covers: one added to a
 * signed request or to a presigned URL's request (`x-amz-copy-source` on a
 * presigned PUT would turn it into a copy from another bucket) is
 * AccessDenied, naming the headers in `HeadersNotSigned`, as S3 answers.
 * `x-amz-content-sha256` is exempt: the canonical request carries the
 * payload hash whether or not the header is signed.
 */
function refuseUnsignedAmzHeaders (headers: IncomingHttpHeaders, signedHeaders: string[]): void {
  let unsigned: string[] | undefined
  for (const name in headers) {
    if (name.startsWith('x-amz-') && name !== 'x-amz-content-sha256' && !signedHeaders.includes(name)) (unsigned ??= []).push(name)
  }
  if (unsigned !== undefined) {
    throw new S3Error('AccessDenied', 'There were headers present in the request which were not signed', {}, { HeadersNotSigned: unsigned.join(', ') })
  }
}

/** The names sorted, each once (they normally come so: then the list itself). */
function sortedOnce (names: string[]): string[] {
  for (let i = 1; i < names.length; i++) {
    if (!(names[i - 1] < names[i])) return [...new Set(names)].sort()
  }
  return names
}

/** The Authorization header as the SDKs and most clients write it; other spellings go through the general parse. */
const USUAL_AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^,\s]+), ?SignedHeaders=([^,\s]+), ?Signature=([^,\s]+)$/

/** S3's answer (InvalidRequest) to Signature Version 2 and other schemes. */
const unsupportedMechanism = `The authorization mechanism you have provided is not supported. Please use ${ALGORITHM}.`

/** What the Authorization header or a presigned URL's query says of the signature, checked for form, date and expiry. */
interface SignatureClaim {
  credentialField: string
  scope: Scope
  signedField: string
  given: string
  longDate: string
  payloadHash: string
}

/** The claim of the Authorization header (`AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…`). */
function headerClaim (request: SignedRequest, nowMs: number): SignatureClaim {
  const malformed = 'AuthorizationHeaderMalformed'
  const header = single(request.headers.authorization) ?? ''
  if (!header.startsWith(AUTHORIZATION_PREFIX)) throw new S3Error('InvalidRequest', unsupportedMechanism)
  let credentialField: string | undefined
  let signedField: string | undefined
  let given: string | undefined
  const usual = USUAL_AUTHORIZATION.exec(header)
  if (usual !== null) {
    [, credentialField, signedField, given] = usual
  } else {
    for (const item of header.slice(AUTHORIZATION_PREFIX.length).split(',')) {
      const eq = item.indexOf('=')
      if (eq <= 0) continue
      const value = item.slice(eq + 1).trim()
      switch (item.slice(0, eq).trim()) {
        case 'Credential': credentialField = value; break
        case 'SignedHeaders': signedField = value; break
        case 'Signature': given = value; break
      }
    }
  }
  if (credentialField === undefined || signedField === undefined || given === undefined) {
    throw new S3Error(malformed, 'The Authorization header needs Credential, SignedHeaders and Signature.')
  }
  const scope = scopeOf(credentialField, malformed)
  const amzDate = single(request.headers['x-amz-date'])
  let date: Date | null
  if (amzDate !== undefined) {
    date = parseAmzDate(amzDate)
  } else {
    const httpDate = single(request.headers.date)
    const ms = httpDate === undefined ? NaN : Date.parse(httpDate)
    date = Number.isNaN(ms) ? null : new Date(ms)
  }
  if (date === null) throw new S3Error('AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header')
  if (Math.abs(nowMs - date.getTime()) > MAX_SKEW_MS) throw new S3Error('RequestTimeTooSkewed', undefined, {})
  const payloadHash = single(request.headers['x-amz-content-sha256'])
  if (payloadHash === undefined) throw new S3Error('InvalidRequest', 'Missing required header for this request: x-amz-content-sha256')
  return { credentialField, scope, signedField, given, longDate: amzDate ?? formatAmzDate(date), payloadHash }
}

const presignedParameters = ['X-Amz-Algorithm', 'X-Amz-Credential', 'X-Amz-Date', 'X-Amz-Expires', 'X-Amz-SignedHeaders', 'X-Amz-Signature', 'X-Amz-Security-Token'] as const

/** The claim of a presigned URL's `X-Amz-*` query parameters, refused when expired or not yet valid. */
function presignedClaim (request: SignedRequest, query: Record<string, string | string[]>, nowMs: number): SignatureClaim {
  const malformed = 'AuthorizationQueryParametersError'
  // One value each: the signature is outside what it signs, so a second one would be left unread; which one the client meant is not ours to pick.
  const repeated = presignedParameters.find(name => Array.isArray(query[name]))
  if (repeated !== undefined) throw new S3Error(malformed, `${repeated} is given more than once.`)
  const algorithm = single(query['X-Amz-Algorithm'])
  const credentialField = single(query['X-Amz-Credential'])
  const dateField = single(query['X-Amz-Date'])
  const expiresField = single(query['X-Amz-Expires'])
  const signedField = single(query['X-Amz-SignedHeaders'])
  const given = single(query['X-Amz-Signature'])
  // Signature Version 2's presigned form, and SigV4A's: mechanisms this server does not verify, as for the header forms.
  if ((algorithm === undefined && query.AWSAccessKeyId !== undefined) || algorithm === 'AWS4-ECDSA-P256-SHA256') {
    throw new S3Error('InvalidRequest', unsupportedMechanism)
  }
  if (algorithm !== ALGORITHM) throw new S3Error(malformed, `X-Amz-Algorithm must be ${ALGORITHM}.`)
  if (credentialField === undefined || dateField === undefined || expiresField === undefined ||
      signedField === undefined || given === undefined) {
    throw new S3Error(malformed, 'A presigned URL needs X-Amz-Credential, X-Amz-Date, X-Amz-Expires, X-Amz-SignedHeaders and X-Amz-Signature.')
  }
  const scope = scopeOf(credentialField, malformed)
  const date = parseAmzDate(dateField)
  if (date === null) throw new S3Error(malformed, 'X-Amz-Date must be yyyymmddThhmmssZ.')
  // Digits (a minus sign is left to the range check), not every form Number() reads (`+60`, `0x10`, `1e3`, ` 60`, `60.0`).
  if (!/^-?\d+$/.test(expiresField)) throw new S3Error(malformed, 'X-Amz-Expires should be a number')
  // S3's three answers: negative and over a week are malformed URLs (400); 0 is a URL that expired as it was made (403).
  const expires = Number(expiresField)
  if (expires < 0) throw new S3Error(malformed, 'X-Amz-Expires must be non-negative')
  if (expires > MAX_EXPIRES_SECONDS) {
    throw new S3Error(malformed, `X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than ${MAX_EXPIRES_SECONDS} seconds`)
  }
  if (expires === 0) throw new S3Error('AccessDenied', 'Request has expired')
  if (date.getTime() - nowMs > MAX_SKEW_MS) throw new S3Error('AccessDenied', 'Request is not yet valid')
  if (nowMs > date.getTime() + expires * 1000) throw new S3Error('AccessDenied', 'Request has expired')
  const payloadHash = presignedPayloadHash(query, single(request.headers['x-amz-content-sha256'])) ?? UNSIGNED_PAYLOAD
  return { credentialField, scope, signedField, given, longDate: dateField, payloadHash }
}

/**
 * Whether `given` signs the request: the header values as received, then
 * (when some differ) read as UTF-8; the path as sent, then (only when that
 * fails) re-encoded the AWS way.
 */
function signatureMatches (request: SignedRequest, query: Record<string, string | string[]>, signed: SignedHeaderList, claim: SignatureClaim, signingKey: KeyObject): boolean {
  const values: string[] = []
  for (const name of signed.names) {
    const value = signedValue(request, name)
    if (value === undefined) throw new S3Error('SignatureDoesNotMatch', `The signed header ${name} is missing.`)
    values.push(value)
  }
  // Header values arrive one Latin-1 character per byte. A client that put UTF-8 in a header (metadata sent as is)
  // signed its bytes: the values read as UTF-8 are tried when the values as received do not verify.
  const utf8Values = values.map(decodeHeaderValue)
  const valueForms = utf8Values.some((value, i) => value !== values[i]) ? [values, utf8Values] : [values]
  const verified = (path: string): boolean => valueForms.some(form => {
    const canonical = canonicalRequest(request.method, path, query, signed, form, claim.payloadHash)
    return signaturesEqual(hmacHex(signingKey, stringToSign(claim.longDate, claim.scope.credential.scope, canonical)), claim.given)
  })
  if (verified(request.rawPath)) return true
  const encoded = awsEncodePath(request.rawPath)
  return encoded !== request.rawPath && verified(encoded)
}

/** A request's signature as read, before its key's secret is known. */
interface PendingSignature {
  claim: SignatureClaim
  signed: SignedHeaderList
  sessionToken: string | undefined
}

function pendingSignature (request: SignedRequest, query: Record<string, string | string[]>, now?: Date): PendingSignature {
  const nowMs = now === undefined ? Date.now() : now.getTime()
  const presigned = request.headers.authorization === undefined
  const sessionToken = presigned ? single(query['X-Amz-Security-Token']) : single(request.headers['x-amz-security-token'])
  const malformed = presigned ? 'AuthorizationQueryParametersError' : 'AuthorizationHeaderMalformed'
  const claim = presigned ? presignedClaim(request, query, nowMs) : headerClaim(request, nowMs)
  const { credential } = claim.scope
  if (claim.longDate.slice(0, 8) !== credential.shortDate) {
    throw new S3Error(malformed, `The credential date ${credential.shortDate} is not the request's date ${claim.longDate.slice(0, 8)}.`)
  }
  const signed = signedHeaderList(claim.signedField)
  if (!signed.names.includes('host')) throw new S3Error(malformed, 'The host header must be signed.')
  return { claim, signed, sessionToken }
}

function verifiedWith (request: SignedRequest, query: Record<string, string | string[]>, { claim, signed }: PendingSignature, secretAccessKey: string | undefined): VerifiedSignature {
  if (secretAccessKey === undefined) throw new S3Error('InvalidAccessKeyId')
  const { credential } = claim.scope
  keep(claim.credentialField, claim.scope, claim.signedField, signed)
  const signingKey = signingKeyOf(claim.scope, secretAccessKey)
  if (!signatureMatches(request, query, signed, claim, signingKey)) throw new S3Error('SignatureDoesNotMatch')
  refuseUnsignedAmzHeaders(request.headers, signed.names)
  return { accessKeyId: credential.accessKeyId, payloadHash: claim.payloadHash, longDate: claim.longDate, scope: credential.scope, signingKey, signature: claim.given }
}

/**
 * Verifies a signed request against the known credentials; returns what the
 * payload decoder needs, or throws the S3 error a client would see.
 */
export async function verifySignature (
  request: SignedRequest,
  query: Record<string, string | string[]>,
  secretOf: (accessKeyId: string, sessionToken: string | undefined) => string | undefined | Promise<string | undefined>,
  now?: Date
): Promise<VerifiedSignature> {
  const pending = pendingSignature(request, query, now)
  return verifiedWith(request, query, pending, await secretOf(pending.claim.scope.credential.accessKeyId, pending.sessionToken))
}

/**
 * `verifySignature` at once, when `secretNow` knows the key's secret without
 * waiting (a configured pair); undefined when it does not (a scoped token's
 * pair, temporary credentials), and then `verifySignature` decides.
 */
export function verifySignatureNow (
  request: SignedRequest,
  query: Record<string, string | string[]>,
  secretNow: (accessKeyId: string, sessionToken: string | undefined) => string | undefined
): VerifiedSignature | undefined {
  const pending = pendingSignature(request, query)
  const secret = secretNow(pending.claim.scope.credential.accessKeyId, pending.sessionToken)
  return secret === undefined ? undefined : verifiedWith(request, query, pending, secret)
}
