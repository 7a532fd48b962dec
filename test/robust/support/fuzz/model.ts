/**
 * What the store must hold: every pet the run saw created (seeded, or a 201 to a fuzzed request),
 * as its 201 said. listPets and getPet answers are compared against it. A pet a successful change
 * or removal named (an operation the model does not predict: updatePet, deletePet, or whatever a
 * spec adds) is forgotten: from then on only the contract is checked for it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Pet } from '../../../../client/index.js';

export class StoreModel {
  private readonly byId = new Map<number, Pet>();
  /** Ids a change or a removal named: what the store holds for them is no longer predicted. */
  readonly touched = new Set<number>();

  add(pet: Pet): void {
    if (this.byId.has(pet.id)) throw new Error(`id ${pet.id} handed out twice`);
    this.byId.set(pet.id, pet);
  }

  /** A change or a removal of `id` succeeded: the model no longer predicts it. */
  forget(id: number): void {
    this.byId.delete(id);
    this.touched.add(id);
  }

  get(id: number): Pet | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  ids(): number[] {
    return [...this.byId.keys()].sort((a, b) => a - b);
  }

  all(): Pet[] {
    return this.ids().map((id) => this.byId.get(id) as Pet);
  }

  /**
   * The page listPets must answer: ascending ids after `afterId`, at most `limit`, keeping the pets
   * whose fields equal every filter (field → value; listModel.ts says which parameter is which).
   */
  page(limit: number, filters: Readonly<Record<string, unknown>>, afterId: number | undefined): { pets: Pet[]; hasMore: boolean } {
    const keeps = (p: Pet) => Object.entries(filters).every(([field, value]) => isDeepStrictEqual((p as unknown as Record<string, unknown>)[field], value));
    const matching = this.all().filter((p) => keeps(p) && (afterId === undefined || p.id > afterId));
    return { pets: matching.slice(0, limit), hasMore: matching.length > limit };
  }
}
