/**
 * What the store must hold: every pet the run saw created (seeded, or a 201 to a fuzzed request),
 * as its 201 said. listPets and getPet answers are compared against it.
 */
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

  /** The page listPets must answer: ascending ids after `afterId`, filtered, at most `limit`. */
  page(limit: number, status: string | undefined, afterId: number | undefined): { pets: Pet[]; hasMore: boolean } {
    const matching = this.all().filter((p) => (status === undefined || p.status === status) && (afterId === undefined || p.id > afterId));
    return { pets: matching.slice(0, limit), hasMore: matching.length > limit };
  }
}
