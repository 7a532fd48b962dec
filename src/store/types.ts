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

/** Where animals live. One implementation serves both SQL dialects. */
export interface PetStore {
  create(pet: NewPetRecord): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  list(query: ListPetsQuery): Promise<PetPage>;
}
