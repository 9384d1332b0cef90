/**
 * The command-line options several commands share, each defined once: the
 * root's `serve`, `bucket` and `sweep`, the management commands (`invite`,
 * `zone`) and the object commands (`cp`, `ls`, ...) all name the data
 * directory and the catalog the same way, with the same variable and
 * default. A flag beats its variable (commander's `.env()`).
 */
import { Option } from 'commander'

/** `-d, --data <dir>` (FSBUCKET_DATA, default `./data`). */
export function dataOption (): Option {
  return new Option('-d, --data <dir>', 'data directory (one sub-directory per bucket)').env('FSBUCKET_DATA').default('./data')
}

/** `--catalog <url>` (FSBUCKET_CATALOG): a PostgreSQL catalog instead of SQLite in each bucket directory. */
export function catalogOption (): Option {
  return new Option('--catalog <url>', 'postgres:// URL of a catalog shared by several gateways (default: SQLite in each bucket directory)')
    .env('FSBUCKET_CATALOG')
}
