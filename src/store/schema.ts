import type { Generated } from 'kysely';

/** The two SQL dialects the store speaks; the migrations differ between them in identity columns. */
export type Dialect = 'sqlite' | 'postgres';

/**
 * The tables the server keeps for itself (keys, secrets, Idempotency-Key records, calls of
 * deprecated operations), as Kysely sees them. A resource's tables are typed in its own module
 * (src/store/resources/), and every table is created by a file of src/store/migrations/.
 */
export interface Database {
  api_keys: {
    id: Generated<number>;
    name: string;
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    key_hash: string;
    created_at: string;
    revoked_at: string | null;
  };
  idempotency_records: {
    /** Whose key: the caller id of the API key that sent it (HandlerRequest.caller). */
    caller: string;
    /** The operation the key was sent to: one key on two operations is two records. */
    operation_id: string;
    /** The `Idempotency-Key` value exactly as sent. */
    idempotency_key: string;
    /** SHA-256 of the request (src/features/exactlyOnce/fingerprint.ts), to tell a retry from a reuse. */
    fingerprint: string;
    /** The first answer, replayed as it was even if what it is about changes later. */
    status: number;
    /** Its headers, as a JSON object. */
    headers: string;
    media_type: string | null;
    body: Uint8Array | null;
    created_at: string;
  };
  deprecated_calls: {
    /** The calling API key's hash (api_keys.key_hash); empty for a call without a key (a public operation). */
    caller: string;
    operation_id: string;
    calls: number;
    /** ISO 8601 UTC; of one length, so they order as text. */
    first_call: string;
    last_call: string;
  };
  server_secrets: {
    name: string;
    /** Random bytes, base64url; shared by every instance on this database. */
    value: string;
  };
}
