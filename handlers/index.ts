import type { Handlers } from '../src/contract.js';
import { createPet } from './createPet.js';
import { getPet } from './getPet.js';
import { listPets } from './listPets.js';

/** One handler per operationId of the spec; the type makes a missing or extra one a compile error. */
export const handlers = { listPets, createPet, getPet } satisfies Handlers;
