/**
 * The PostgreSQL catalog's schema and its versioned migrations. Every table
 * lives in the schema `fsbucket`; `fsbucket.migrations` records which
 * versions are applied. Gateways starting at once serialise on an advisory
 * lock, so each migration runs once, in its own transaction.
 *
 *   stores     one row per bucket store (an incarnation of a bucket): `retired` refuses writes,
 *              `lock_rules` are its bucket locks
 *   buckets    name → store, and the bucket's settings document; `rev` moves on every write
 *   registry   one row whose `rev` moves when a bucket appears, disappears or changes settings
 *   objects    the object index of every store, keyed by (store, UTF-8 bytes of the NFC key);
 *              `rev` (from one sequence, never reused) is what a conditional write compares and sets
 *   uploads, parts   multipart uploads in progress
 *   garbage    body files no row names any more, removed by the sweeper after a grace period
 *   documents  small JSON documents of state areas (the management API's), kept as written (text)
 */
import type pg from 'pg'

/** The advisory lock key (any 64-bit number of our own) that migrations run under. */
const MIGRATION_LOCK = 0x66736275636b01n

export const migrations: ReadonlyArray<{ version: number, sql: string }> = [
  {
    version: 1,
    sql: `
CREATE SEQUENCE fsbucket.revisions;
CREATE TABLE fsbucket.stores (
  id text PRIMARY KEY,
  retired boolean NOT NULL DEFAULT false
);
CREATE TABLE fsbucket.buckets (
  name text PRIMARY KEY,
  store_id text NOT NULL UNIQUE,
  document text,
  rev bigint NOT NULL DEFAULT nextval('fsbucket.revisions')
);
CREATE TABLE fsbucket.registry (
  one integer PRIMARY KEY CHECK (one = 1),
  rev bigint NOT NULL
);
INSERT INTO fsbucket.registry (one, rev) VALUES (1, 0);
CREATE TABLE fsbucket.objects (
  store_id text NOT NULL,
  id bytea NOT NULL,
  key text NOT NULL,
  version text NOT NULL,
  size bigint NOT NULL,
  etag text NOT NULL,
  uploaded bigint NOT NULL,
  storage_class text NOT NULL,
  checksums text NOT NULL,
  http_metadata text NOT NULL,
  custom_metadata text NOT NULL,
  segments jsonb NOT NULL,
  rev bigint NOT NULL DEFAULT nextval('fsbucket.revisions'),
  PRIMARY KEY (store_id, id)
);
CREATE INDEX objects_by_version ON fsbucket.objects (store_id, version);
CREATE TABLE fsbucket.uploads (
  store_id text NOT NULL,
  upload_id text NOT NULL,
  id bytea NOT NULL,
  key text NOT NULL,
  created bigint NOT NULL,
  storage_class text NOT NULL,
  http_metadata text NOT NULL,
  custom_metadata text NOT NULL,
  PRIMARY KEY (store_id, upload_id)
);
CREATE INDEX uploads_by_created ON fsbucket.uploads (store_id, created);
CREATE TABLE fsbucket.parts (
  store_id text NOT NULL,
  upload_id text NOT NULL,
  part_number integer NOT NULL,
  etag text NOT NULL,
  size bigint NOT NULL,
  file text NOT NULL,
  PRIMARY KEY (store_id, upload_id, part_number)
);
CREATE TABLE fsbucket.garbage (
  seq bigserial PRIMARY KEY,
  store_id text NOT NULL,
  file text NOT NULL,
  since bigint NOT NULL
);
CREATE INDEX garbage_by_store ON fsbucket.garbage (store_id, since);
CREATE TABLE fsbucket.documents (
  area text NOT NULL,
  name text NOT NULL,
  value text NOT NULL,
  PRIMARY KEY (area, name)
);
`
  },
  {
    // A part's checksums (JSON, hex by algorithm) beside its MD5; NULL for parts stored before.
    version: 2,
    sql: 'ALTER TABLE fsbucket.parts ADD COLUMN checksums text'
  },
  {
    // An upload's checksum algorithm and type (JSON); NULL for none and for uploads created before.
    version: 3,
    sql: 'ALTER TABLE fsbucket.uploads ADD COLUMN checksum text'
  },
  {
    // A store's bucket lock rules (JSON, as locks.ts keeps them); NULL for none. On the store's row,
    // which every write holds FOR SHARE: changing the rules waits for the writes judged against the old ones.
    version: 4,
    sql: 'ALTER TABLE fsbucket.stores ADD COLUMN lock_rules text'
  },
  {
    // The outbox of event notifications (outbox.ts): messages written with the change they tell of.
    version: 5,
    sql: `
CREATE TABLE fsbucket.outbox (
  seq bigserial PRIMARY KEY,
  store_id text NOT NULL,
  queue text NOT NULL,
  id text NOT NULL,
  body text NOT NULL,
  created bigint NOT NULL,
  visible_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  lease text
);
CREATE INDEX outbox_by_visibility ON fsbucket.outbox (store_id, queue, visible_at, seq);
CREATE INDEX outbox_by_age ON fsbucket.outbox (store_id, queue, created);
`
  },
  {
    // When a part was uploaded (milliseconds, the engine's clock); NULL for parts stored before, listed with their upload's creation time.
    version: 6,
    sql: 'ALTER TABLE fsbucket.parts ADD COLUMN uploaded bigint'
  }
]

/** The newest schema version this fsbucket knows. */
export const SCHEMA_VERSION = migrations[migrations.length - 1].version

/**
 * Brings the schema to SCHEMA_VERSION. Refuses a catalog migrated by a newer
 * fsbucket (its gateways would write rows this one does not understand).
 */
export async function migrate (client: pg.ClientBase): Promise<number[]> {
  const applied: number[] = []
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()])
  try {
    await client.query('CREATE SCHEMA IF NOT EXISTS fsbucket')
    await client.query('CREATE TABLE IF NOT EXISTS fsbucket.migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())')
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM fsbucket.migrations')).rows.map(r => r.version))
    const newest = Math.max(0, ...done)
    if (newest > SCHEMA_VERSION) {
      throw new Error(`The catalog's schema is version ${newest}; this fsbucket knows up to version ${SCHEMA_VERSION}. Upgrade fsbucket.`)
    }
    for (const { version, sql } of migrations) {
      if (done.has(version)) continue
      await client.query('BEGIN')
      try {
        await client.query(sql)
        await client.query('INSERT INTO fsbucket.migrations (version) VALUES ($1)', [version])
        await client.query('COMMIT')
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {})
        throw err
      }
      applied.push(version)
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]).catch(() => {})
  }
  return applied
}
