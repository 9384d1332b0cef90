/** The S3-compatible API: what the composition root (src/main.ts) and tests use. */
export { buildS3App, type S3Connections } from './app.js'
export { DEVELOPMENT_CREDENTIAL, s3AccessPolicy, s3CredentialFrom, s3StartupNote } from './auth.js'
export type { S3AccessPolicy } from './auth.js'
export { errorDocument } from './xml.js'
