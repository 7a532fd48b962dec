/**
 * What a resource's store module gets. Each file of src/store/resources/ is one resource: its
 * tables' types (`Tables`), and `open(context)`, which returns the object handlers reach as
 * `deps.<file name>` (src/domain/contract.ts). `npm run generate` finds the modules (generated/stores.ts),
 * so adding one edits no list.
 */
import type { Kysely } from 'kysely';
import type { OpenApiDocument } from '../shared/spec.js';
import type { Database, Dialect } from './schema.js';

export interface ResourceContext {
  /** The database, typed with the server's own tables; a module adds its own with `db.withTables<Tables>()`. */
  db: Kysely<Database>;
  dialect: Dialect;
  /** Hears the size of each group commit, where a store batches its writes (the metrics' histogram). */
  onBatch?: (size: number) => void;
  /** The contract, for a store that checks what it writes against it (an event's body: ./resources/webhooks.ts). */
  document: OpenApiDocument;
  /** Hears that events were committed (the webhooks feature then delivers them at once, not at its next poll). */
  onEvents?: () => void;
}
