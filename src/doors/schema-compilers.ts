/**
 * Fastify's schema compilers (ajv for validation, fast-json-stringify for
 * serialization), loaded on first use. Fastify loads both as each app is
 * made, though a compiler is only ever asked for by a route that declares a
 * schema, which no route of these doors does: here they cost a worker about
 * 110 ms of start-up and 9 MiB of memory for nothing. Given to an app as
 * `schemaController.compilersFactory`, these load the same packages, found
 * from Fastify itself (they are its dependencies), the first time one is
 * needed.
 */
import { createRequire } from 'node:module'

type Factory = (...args: unknown[]) => unknown

const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'))

function onFirstUse (name: string): Factory {
  let made: Factory | undefined
  return (...args) => (made ??= (fromFastify(name) as () => Factory)())(...args)
}

export const lazySchemaCompilers = {
  buildValidator: onFirstUse('@fastify/ajv-compiler'),
  buildSerializer: onFirstUse('@fastify/fast-json-stringify-compiler')
}
