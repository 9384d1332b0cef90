/**
 * Races of multipart uploads at the body files (test/conformance/upload-races.ts), against
 * the filesystem store.
 */
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { completionLinkRaces, createOnlyCompletionRaces, partPlacementRaces } from '../../conformance/upload-races.js'

const open = async (dir: string): Promise<Awaited<ReturnType<typeof openBucket>>> => await openBucket(dir, { fsync: false })
partPlacementRaces(t, open)
completionLinkRaces(t, open)
createOnlyCompletionRaces(t, open)
