/**
 * The store as the rest of the code sees it (the handlers get a PetStore through ../contract.ts):
 * plain data in, plain data out, nothing of SQL. ./pets.ts implements it.
 */
import type { JsonText, Pet, PetStatus } from '../schemas.js';

/** A new animal after validation: the spec's default status has been applied. */
export type NewPetRecord = Omit<Pet, 'id'>;

export interface ListPetsQuery {
  limit: number;
  status?: PetStatus;
  /** Only animals with a larger id: the position a cursor encodes. */
  afterId?: number;
}

export interface PetPage {
  /** The page as the JSON array the client gets, built by the database. */
  pets: JsonText<Pet[]>;
  /** The id of the page's last pet, where a next page starts. */
  lastId: number | undefined;
  /** True when animals exist past the last one of this page. */
  hasMore: boolean;
}

/**
 * An `Idempotency-Key` as sent (spec: IdempotencyKey) and whose it is: keys belong to the API key
 * that sent them, so two callers with the same key never meet.
 */
export interface IdempotencyKey {
  /** The opaque id of the API key (../contract.ts, HandlerRequest.caller). */
  caller: string;
  key: string;
}

/**
 * What a create came to, named as the spec names the answers. Without an `Idempotency-Key`
 * always `created`. With one: `replayed` when the key was used before with an equal body (`body`
 * is the first 201's, as sent then; Idempotent-Replayed), `idempotency_key_reused` when with
 * another body (422), `idempotency_key_in_use` while the first request with the key is still
 * being served (409).
 */
export type CreateOutcome =
  | { outcome: 'created'; pet: Pet }
  | { outcome: 'replayed'; petId: number; body: JsonText<Pet> }
  | { outcome: 'idempotency_key_reused' }
  | { outcome: 'idempotency_key_in_use' };

/** Where animals live. One implementation serves both SQL dialects. */
export interface PetStore {
  /** Adds the animal; with `once`, at most once per key (see CreateOutcome). */
  create(pet: NewPetRecord, once?: IdempotencyKey): Promise<CreateOutcome>;
  get(id: number): Promise<Pet | undefined>;
  list(query: ListPetsQuery): Promise<PetPage>;
}
