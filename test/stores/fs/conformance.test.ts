/**
 * Runs the binding's conformance suite against the filesystem bucket.
 */
import t from 'tap'
import { openBucket } from '../../../src/index.js'
import { bucketConformance } from '../../conformance/bucket.js'

bucketConformance(t, openBucket)
