// The types of tests-from-dist.js (plain JavaScript, loaded by tap's node-arg), for its test.
import type { ResolveHook } from 'node:module'
export declare function compiledTest (file: string): string | null
export declare const resolve: ResolveHook
