import type { JsonText, Schemas } from '../contract.js';

export type Pet = Schemas['Pet'];
export type PetStatus = Schemas['PetStatus'];
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
