/**
 * A request's Content-Type is the object's, kept as the client sent it:
 * S3 stores whatever string it is given (empty, `;;;`, `a/b/c`, a list) and
 * answers it back, and the doors that take object bodies do the same.
 *
 * Fastify judges the header before any content-type parser runs, the
 * catch-all included, and refuses one it cannot parse with 415 (which the
 * S3 door, not knowing the error, answered as a 500). So a door whose
 * bodies are streams hides such a header from Fastify while it picks the
 * parser (onRequest: a stand-in type) and puts it back before the route
 * runs (preValidation, the first hook after parsing), so signatures and
 * metadata see the bytes sent. A well-formed media type is left alone: a
 * door's typed parser (a multipart form's) still gets it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'

const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const quoted = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x21-\\x7e\\x80-\\xff])*"'
/** RFC 9110 8.3.1 media-type (type "/" subtype parameters), stricter than Fastify's check, so nothing it refuses passes. */
const mediaType = new RegExp(`^${token}/${token}(?:[ \\t]*;[ \\t]*${token}=(?:${token}|${quoted}))*[ \\t]*$`)

/** Whether Fastify takes `value` as a media type (checked strictly, see above). */
export function isWellFormedMediaType (value: string): boolean {
  return mediaType.test(value)
}

/** The type Fastify sees in place of a header it would refuse: any body parser of the door's takes it as a stream. */
const STAND_IN = 'application/octet-stream'

/** Lets every Content-Type reach the routes of `app` (a scope whose bodies stream through a catch-all parser). */
export function acceptAnyContentType (app: FastifyInstance): void {
  const hidden = new WeakMap<FastifyRequest, string>()
  app.addHook('onRequest', (request, _reply, done) => {
    const value = request.headers['content-type']
    if (value !== undefined && !isWellFormedMediaType(value)) {
      hidden.set(request, value)
      request.headers['content-type'] = STAND_IN
    }
    done()
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const value = hidden.get(request)
    if (value !== undefined) request.headers['content-type'] = value
    done()
  })
}
