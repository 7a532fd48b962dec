import type { Generated } from 'kysely';

/** The two SQL dialects the store speaks; the migrations differ between them in identity columns. */
export type Dialect = 'sqlite' | 'postgres';

/** Table shapes as Kysely sees them; created by ./migrations.ts. */
export interface Database {
  pets: {
    id: Generated<number>;
    name: string;
    category_id: number;
    status: 'available' | 'pending' | 'sold';
    created_at: string;
  };
  api_keys: {
    id: Generated<number>;
    name: string;
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    key_hash: string;
    created_at: string;
    revoked_at: string | null;
  };
  server_secrets: {
    name: string;
    /** Random bytes, base64url; shared by every instance on this database. */
    value: string;
  };
}
