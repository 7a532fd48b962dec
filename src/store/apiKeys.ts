import type { Kysely } from 'kysely';
import { generateApiKey, hashApiKey } from '../domain/apiKey.js';
import type { Database } from './schema.js';

export interface ApiKeyInfo {
  id: number;
  name: string;
  createdAt: string;
  revokedAt: string | null;
  /** The scopes the key holds; undefined: every scope (a key made without any). */
  scopes: readonly string[] | undefined;
}

/** An active key as the key check needs it: its hash and its scopes (undefined: every scope). */
export interface ActiveKey {
  hash: string;
  scopes: readonly string[] | undefined;
}

/** A scope as OAuth 2.0 writes one (RFC 6749 §3.3): printable ASCII but space, `"` and `\`. */
export const SCOPE = /^[\x21\x23-\x5B\x5D-\x7E]{1,100}$/;

const scopesOf = (column: string | null): readonly string[] | undefined => (column === null ? undefined : column.split(' ').filter((scope) => scope.length > 0));

export interface ApiKeyStore {
  /** Creates a key holding `scopes` (every scope when undefined); the plain key is returned here and never again. */
  create(name: string, scopes?: readonly string[]): Promise<{ info: ApiKeyInfo; key: string }>;
  list(): Promise<ApiKeyInfo[]>;
  /** False when no key has that id. Revoking twice keeps the first time. */
  revoke(id: number): Promise<boolean>;
  count(): Promise<number>;
  /** Every key that is not revoked: its hash and its scopes. */
  activeKeys(): Promise<ActiveKey[]>;
}

export function createApiKeyStore(db: Kysely<Database>): ApiKeyStore {
  const columns = ['id', 'name', 'created_at', 'revoked_at', 'scopes'] as const;
  const toInfo = (r: { id: number; name: string; created_at: string; revoked_at: string | null; scopes: string | null }): ApiKeyInfo => ({
    id: r.id,
    name: r.name,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    scopes: scopesOf(r.scopes),
  });
  return {
    async create(name, scopes) {
      const invalid = (scopes ?? []).filter((scope) => !SCOPE.test(scope));
      if (invalid.length > 0) throw new Error(`not a scope (RFC 6749 §3.3: printable characters but space, " and \\): ${invalid.map((scope) => JSON.stringify(scope)).join(', ')}`);
      const key = generateApiKey();
      const row = await db
        .insertInto('api_keys')
        .values({ name, key_hash: hashApiKey(key), created_at: new Date().toISOString(), revoked_at: null, scopes: scopes === undefined ? null : [...new Set(scopes)].join(' ') })
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
    async activeKeys() {
      const rows = await db.selectFrom('api_keys').select(['key_hash', 'scopes']).where('revoked_at', 'is', null).execute();
      return rows.map((r) => ({ hash: r.key_hash, scopes: scopesOf(r.scopes) }));
    },
  };
}
