import type { Generated } from 'kysely';

/** The two SQL dialects the store speaks; the migrations differ between them in identity columns. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The tables the server keeps for itself (keys, secrets), as Kysely sees them. A resource's
 * tables are typed in its own module (src/store/resources/) and created by a file of
 * src/store/migrations/; a feature's (exactly-once's records, the deprecated calls) in its own
 * folder, with their migrations (`db.withTables<Tables>()` there).
 */
export interface Database {
  api_keys: {
    id: Generated<number>;
    name: string;
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    key_hash: string;
    created_at: string;
    revoked_at: string | null;
    /** The scopes the key holds, space-separated; null: every scope (0008_api_key_scopes). */
    scopes: string | null;
  };
  server_secrets: {
    name: string;
    /** Random bytes, base64url; shared by every instance on this database. */
    value: string;
  };
}
