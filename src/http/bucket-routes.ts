/**
 * The HTTP routes of one bucket (`/<bucket>`): list a page, delete keys in
 * bulk (`POST ?delete` with `{"keys": [...]}`), and upload a
 * `multipart/form-data` form, each file streamed into its own `put`. A
 * form that fails after storing some files answers the error with those
 * files in `result.stored` (they stay stored); a bulk delete a bucket lock
 * partly refuses answers its error with `result: {deleted, kept}`:
 * routes.ts's error handler writes a `PartialFailure` so.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BucketError, isBucketError } from '../bucket/index.js'
import type { Bucket, BucketInfo } from '../bucket/index.js'
import { bodyBudget } from '../doors/body-budget.js'
import { continueBody } from '../doors/expect-continue.js'
import { DoorError, errorReply, success } from './errors.js'
import { ssecKeyFrom } from './object-headers.js'
import { bucketMethods, enter, preflight, queryValue, readJsonBody, refuseMethod, slowDown, type RouteScope } from './route-scope.js'

function keysFrom (body: unknown): string[] {
  const keys = (body as { keys?: unknown } | null)?.keys
  if (!Array.isArray(keys) || !keys.every(k => typeof k === 'string')) {
    throw new DoorError('InvalidArgument', 'The body must be {"keys": ["a", "b", ...]}.')
  }
  return keys
}

/**
 * A request that failed after doing part of its work: a form upload that
 * had stored some of its files (they stay stored: each file is its own
 * put), a bulk delete that deleted the keys a bucket lock does not keep.
 * Answered as its `cause` would be, the message followed by `detail` when
 * there is one, with `result` saying what was done.
 */
export class PartialFailure extends Error {
  constructor (cause: unknown, readonly result: Record<string, unknown>, readonly detail = '') {
    super(detail, { cause })
  }
}

/** Says which file part failed (1-based among the file parts, null between parts) and which keys were stored before it. */
function storedBeforeFailure (keys: string[], failedPart: number | null): string {
  const shown = keys.slice(0, 10).map(k => JSON.stringify(k)).join(', ')
  const more = keys.length > 10 ? `, and ${keys.length - 10} more` : ''
  const part = failedPart === null ? '' : `The form's file part ${failedPart} was not stored; `
  const files = `${keys.length} ${keys.length === 1 ? 'file' : 'files'} stored before it: ${shown}${more} (result.stored).`
  return part === '' ? files.charAt(0).toUpperCase() + files.slice(1) : part + files
}

async function listBucket (request: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<void> {
  const query = request.query as Record<string, unknown>
  const limit = queryValue(query, 'limit')
  if (limit !== undefined && !/^\d+$/.test(limit)) throw new BucketError('InvalidMaxKeys', 'list')
  const include = queryValue(query, 'include')
  const listed = await bucket.list({
    prefix: queryValue(query, 'prefix'),
    delimiter: queryValue(query, 'delimiter'),
    cursor: queryValue(query, 'cursor'),
    limit: limit === undefined ? undefined : Number(limit),
    include: include === undefined ? undefined : include.split(',').filter(s => s !== '') as Array<'httpMetadata' | 'customMetadata'>
  })
  return await reply.send(success(listed.objects, {
    cursor: listed.cursor ?? null,
    truncated: listed.truncated,
    delimitedPrefixes: listed.delimitedPrefixes
  }))
}

async function deleteKeys (request: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<void> {
  const keys = keysFrom(await readJsonBody(request.raw))
  const kept = new Set(await bucket.deleteEach(keys))
  if (kept.size > 0) {
    // The binding's error, naming the first kept key; the answer also says which keys went, so a client need not ask after each.
    const locked = new BucketError('ObjectLocked', 'delete', `(key: ${JSON.stringify(keys.find(k => kept.has(k)))})`)
    throw new PartialFailure(locked, { deleted: keys.filter(k => !kept.has(k)), kept: keys.filter(k => kept.has(k)) })
  }
  return await reply.send(success({ deleted: keys }))
}

async function uploadForm (request: FastifyRequest, reply: FastifyReply, bucket: Bucket, info: BucketInfo): Promise<void> {
  const fields: Record<string, string> = {}
  const stored: unknown[] = []
  const keys: string[] = []
  let files = 0
  let storedBytes = 0
  let storing = false
  // A customer key in the request's headers encrypts every file of the form (malformed: 40003 before anything is read).
  const ssecKey = ssecKeyFrom(request.headers)
  // The fields' values are held until the form ends (up to 100 of 64 KiB): they draw on the process's body budget.
  const hold = bodyBudget.hold()
  continueBody(request.raw)
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        const value = String(part.value)
        if (!hold.take(Buffer.byteLength(value))) throw slowDown()
        // A value that was not UTF-8 reaches here with its bytes replaced (U+FFFD), as a file name does: two such keys or prefixes would make one key.
        if ((part.fieldname === 'key' || part.fieldname === 'prefix') && value.includes('\uFFFD')) {
          throw new DoorError('InvalidForm', `The form's "${part.fieldname}" field is not valid UTF-8 (its bytes cannot make a key); send it in UTF-8.`)
        }
        // Two values for one key or prefix: which the client meant is not ours to guess (the last would silently win).
        if ((part.fieldname === 'key' || part.fieldname === 'prefix') && Object.hasOwn(fields, part.fieldname)) {
          throw new DoorError('InvalidForm', `The form gives the "${part.fieldname}" field more than once; give it once.`)
        }
        fields[part.fieldname] = value
        continue
      }
      // A file input left empty: a browser sends the part with no file name and no bytes. Nothing to store.
      // A part with bytes but no name (none sent, or one that was only a path) needs the form's `key`.
      if (part.filename === '' && fields.key === undefined) {
        let bytes = 0
        for await (const chunk of part.file) bytes += (chunk as Buffer).byteLength
        if (bytes === 0) continue
        files++
        storing = true
        throw new DoorError('InvalidForm', `A file part of ${bytes} bytes has no file name to make its key from (none was sent, or only a path such as ".."); give the form a "key" field.`)
      }
      // A name that was not UTF-8 reaches here with its bytes replaced (U+FFFD): two such names would make one key.
      if (fields.key === undefined && part.filename.includes('\uFFFD')) {
        throw new DoorError('InvalidForm', 'A file name is not valid UTF-8 (its bytes cannot make a key); send it in UTF-8, or give the form a "key" field.')
      }
      files++
      storing = true
      // One `key` names one object: a second file would replace the first, reported as stored.
      if (fields.key !== undefined && files > 1) throw new DoorError('InvalidForm', 'The form names one key (field "key") and has more than one file; name several files with "prefix".')
      const key = fields.key ?? `${fields.prefix ?? ''}${part.filename}`
      request.logFields = { bucket: request.logFields?.bucket, key }
      const object = await bucket.put(key, part.file, {
        httpMetadata: { contentType: part.mimetype },
        storageClass: info.settings.storageClass,
        ssecKey
      })
      storing = false
      stored.push(object)
      keys.push(key)
      storedBytes += object?.size ?? 0
    }
  } catch (err) {
    // Busboy reports a malformed form with plain errors that carry no code.
    const known = errorReply(err)
    const failed = known.status === 500 && !isBucketError(err) ? new DoorError('InvalidForm', (err as Error).message) : err
    // Each file was its own put: those stored before the failure stay, and the answer says which.
    if (stored.length === 0) throw failed
    throw new PartialFailure(failed, { stored }, storedBeforeFailure(keys, storing ? files : null))
  } finally {
    hold.release()
  }
  if (stored.length === 0) throw new DoorError('InvalidForm', 'The form has no file part.')
  request.logFields = { bucket: request.logFields?.bucket, key: keys.length === 1 ? keys[0] : undefined, bytes: storedBytes }
  return await reply.send(success(stored))
}

export async function handleBucket (scope: RouteScope, request: FastifyRequest, reply: FastifyReply, name: string): Promise<void> {
  const query = request.query as Record<string, unknown>
  switch (request.method) {
    case 'OPTIONS':
      return await preflight(scope, request, reply, name, false)
    case 'GET':
    case 'HEAD': {
      const { bucket } = await enter(scope, request, reply, name, 'read', 'objects:list', queryValue(query, 'prefix'))
      return await listBucket(request, reply, bucket)
    }
    case 'POST': {
      const { bucket, info } = await enter(scope, request, reply, name, 'write', 'object:write')
      if (queryValue(query, 'delete') !== undefined) return await deleteKeys(request, reply, bucket)
      if (request.isMultipart()) return await uploadForm(request, reply, bucket, info)
      throw new DoorError('InvalidAction', 'POST on a bucket takes ?delete with {"keys": [...]} or a multipart/form-data upload.')
    }
    default:
      return await refuseMethod(scope, request, reply, name, bucketMethods)
  }
}
