/**
 * What the store must hold: every pet the run saw created (seeded, or a 201 to a fuzzed request),
 * as its 201 said. listPets and getPet answers are compared against it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Pet } from '../../../../client/index.js';

export class StoreModel {
  private readonly byId = new Map<number, Pet>();

  add(pet: Pet): void {
    if (this.byId.has(pet.id)) throw new Error(`id ${pet.id} handed out twice`);
    this.byId.set(pet.id, pet);
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
