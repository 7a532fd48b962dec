import type { Kysely } from 'kysely';
import { generateApiKey, hashApiKey } from '../domain/apiKey.js';
import type { Database } from './schema.js';

export interface ApiKeyInfo {
  id: number;
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface ApiKeyStore {
  /** Creates a key; the plain key is returned here and never again. */
  create(name: string): Promise<{ info: ApiKeyInfo; key: string }>;
  list(): Promise<ApiKeyInfo[]>;
  /** False when no key has that id. Revoking twice keeps the first time. */
  revoke(id: number): Promise<boolean>;
  count(): Promise<number>;
  /** Hashes of every key that is not revoked. */
  activeHashes(): Promise<string[]>;
}

export function createApiKeyStore(db: Kysely<Database>): ApiKeyStore {
  const columns = ['id', 'name', 'created_at', 'revoked_at'] as const;
  const toInfo = (r: { id: number; name: string; created_at: string; revoked_at: string | null }): ApiKeyInfo => ({
    id: r.id,
    name: r.name,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  });
  return {
    async create(name) {
      const key = generateApiKey();
      const row = await db
        .insertInto('api_keys')
        .values({ name, key_hash: hashApiKey(key), created_at: new Date().toISOString(), revoked_at: null })
        .returning(columns)
        .executeTakeFirstOrThrow();
      return { info: toInfo(row), key };
    },
    async list() {
      const rows = await db.selectFrom('api_keys').select(columns).orderBy('id', 'asc').execute();
      return rows.map(toInfo);
    },
    async revoke(id) {
      const found = await db.selectFrom('api_keys').select('id').where('id', '=', id).executeTakeFirst();
      if (!found) return false;
      await db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      return true;
    },
    async count() {
      const row = await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async activeHashes() {
      const rows = await db.selectFrom('api_keys').select('key_hash').where('revoked_at', 'is', null).execute();
      return rows.map((r) => r.key_hash);
    },
  };
}
