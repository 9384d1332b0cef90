// The types of build-if-stale.js (plain JavaScript, run before dist/ exists), for its test.
export interface BuildState { newest: { path: string, mtimeMs: number } | null, stampMs: number | null, entryExists: boolean }
export interface BuildDecision { needed: boolean, reason: string }
export declare const sourcePaths: string[]
export declare const stampPath: string
export declare const entryPath: string
export declare function buildDecision (state: BuildState): BuildDecision
export declare function newestFile (base: string, paths: string[]): { path: string, mtimeMs: number } | null
export declare function buildIfStale (base: string, options?: { force?: boolean, build?: () => boolean, log?: (line: string) => void }): BuildDecision & { built: boolean }
