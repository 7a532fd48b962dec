/**
 * Sends generated cases to the running server and checks each answer: first the properties
 * every response has (responseContract), then what the case itself expects — a refusal with the
 * right status, code and field, or for valid requests the exact answer the store model predicts,
 * including the round trip of a created pet: every field (test/support/roundTrip.ts derives what
 * must come back from the spec), the name byte for byte.
 */
import { nextLink, type Pet } from '../../../../client/index.js';
import { describeDifferences, expectedPet, petDifferences, serverAssignedFields, type PetRecord } from '../../../support/roundTrip.js';
import { describeWire, type InvalidCase, type NewPetSent, type ValidCreateCase, type ValidGetCase, type ValidListCase } from './cases.js';
import type { StoreModel } from './model.js';
import { parseJson, type ResponseContract } from './responseContract.js';
import { pathOf } from './requestParts.js';
import { JsonObject, serialize, type JsonValue } from './jsonText.js';
import { ListQueryModel } from './listModel.js';
import { operation, type ContractSpec, type OperationSpec } from './spec.js';
import type { Kind, Tally } from './tally.js';
import { TransportFailure, type Wire, type WireRequest, type WireResponse } from './wire.js';

export class CaseFailure extends Error {}

/** The body as the server parses it: the JSON text sent, read back (raw numbers, ordered entries). */
function sentValue(pet: NewPetSent): PetRecord {
  const entries = Object.entries(pet).filter((e): e is [string, JsonValue] => e[1] !== undefined);
  return JSON.parse(serialize(new JsonObject(entries))) as PetRecord;
}

export interface HarnessOptions {
  contract: ContractSpec;
  checker: ResponseContract;
  wire: Wire;
  model: StoreModel;
  tally: Tally;
  key: string;
  /** The server's origin (`http://127.0.0.1:port`), for /healthz. */
  origin: string;
  /** Whether the server process is still running, and what it printed (for failure messages). */
  alive: () => boolean;
  output: () => string;
}

function show(response: WireResponse): string {
  return `${response.status} ${JSON.stringify(response.body.subarray(0, 400).toString('utf8'))}`;
}

/**
 * How `got` differs from the pet `expected`, field by field, the whole object (every field the
 * spec declares, deep, key order aside): one line per field; empty when they are the same.
 */
function petMismatch(expected: Pet | PetRecord, got: unknown, allowed: readonly string[] = []): string {
  return describeDifferences('', petDifferences(expected as PetRecord, got, allowed)).join('; ');
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The integers a request target's path names (`/v1/pets/7/photo` → 7), percent-decoded. */
function idsInPath(target: string): number[] {
  const path = target.split('?', 1)[0] ?? '';
  return path.split('/').flatMap((segment) => {
    let text: string;
    try {
      text = decodeURIComponent(segment);
    } catch {
      return [];
    }
    return /^[0-9]+$/.test(text) ? [Number(text)] : [];
  });
}

export class Harness {
  private readonly listPets: OperationSpec;
  private readonly createPet: OperationSpec;
  private readonly getPet: OperationSpec;
  private readonly listQuery: ListQueryModel;
  /** Response fields the request cannot set (besides id): their values are the server's. */
  private readonly serverAssigned: string[];

  constructor(private readonly o: HarnessOptions) {
    this.listPets = operation(o.contract, 'listPets');
    this.createPet = operation(o.contract, 'createPet');
    this.getPet = operation(o.contract, 'getPet');
    this.listQuery = new ListQueryModel(o.contract, this.listPets);
    this.serverAssigned = serverAssignedFields(o.contract.document);
  }

  /** One request, counted, with the universal properties checked. */
  async send(op: OperationSpec, kind: Kind, wire: WireRequest): Promise<WireResponse> {
    let response: WireResponse;
    try {
      response = await this.o.wire.send(wire);
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      throw new CaseFailure(`${op.operationId}: no response to ${describeWire(wire)}: ${error.message}; server ${this.o.alive() ? 'still running' : `DEAD:\n${this.o.output().slice(-3000)}`}`);
    }
    this.o.tally.record(op.operationId, kind, response.status);
    const problems = this.o.checker.problems(op, response);
    if (problems.length > 0) throw new CaseFailure(`${op.operationId}: ${describeWire(wire)}\n  → ${show(response)}\n  broke the contract: ${problems.join('; ')}`);
    return response;
  }

  /**
   * A valid read sent with `If-None-Match` (a benign-looking header: `*`) may be a 304. Then the
   * same request without it must be a 200 whose ETag the condition matches (`*`, or one of the
   * listed tags compared weakly: RFC 9110 §13.1.2), and that 200 is what the case goes on to
   * check. A 200 to a condition that matches its own ETag should have been a 304.
   */
  private async unconditional(op: OperationSpec, wire: WireRequest, response: WireResponse): Promise<WireResponse> {
    const condition = wire.headers.find(([name]) => name.toLowerCase() === 'if-none-match')?.[1];
    if (condition === undefined) return response;
    const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
    const matches = (etag: string | undefined) => etag !== undefined && (condition.trim() === '*' || condition.split(',').some((tag) => opaque(tag) === opaque(etag)));
    const fail = (why: string) => new CaseFailure(`${op.operationId}: ${describeWire(wire)}\n  → ${show(response)}\n  ${why}`);
    if (response.status === 200 && matches(response.headers.etag)) throw fail('a 200 whose ETag the If-None-Match matches: expected 304');
    if (response.status !== 304) return response;
    const plain = { ...wire, headers: wire.headers.filter(([name]) => name.toLowerCase() !== 'if-none-match') };
    const full = await this.send(op, 'valid', plain);
    if (full.status !== 200 || !matches(full.headers.etag)) throw fail(`304, but without If-None-Match: ${show(full)} (ETag ${JSON.stringify(full.headers.etag)})`);
    if (response.headers.etag !== full.headers.etag) throw fail(`the 304's ETag ${JSON.stringify(response.headers.etag)} is not the 200's ${JSON.stringify(full.headers.etag)}`);
    return full;
  }

  async invalid(op: OperationSpec, c: InvalidCase): Promise<void> {
    const response = await this.send(op, 'invalid', c.wire);
    // Whatever was expected, a pet that was created is in the store now: the model must know.
    if (response.status === 201) await this.adoptCreated(response, c.wire);
    // A change or a removal that succeeded: the ids its path named are no longer predicted.
    else if (response.status >= 200 && response.status < 300 && !SAFE_METHODS.has(c.wire.method)) for (const id of idsInPath(c.wire.target)) this.o.model.forget(id);
    const fail = (why: string) => new CaseFailure(`${op.operationId} [${c.family}]: ${describeWire(c.wire)}\n  → ${show(response)}\n  ${why}`);
    if (c.expect.kind === 'any') return;
    const { statuses, code, field, allow } = c.expect;
    if (!statuses.includes(response.status)) throw fail(`expected ${statuses.join(' or ')}`);
    const error = this.o.checker.errorBody(response);
    if (code && error?.code !== code) throw fail(`expected code ${code}`);
    if (field && response.status === 400 && !error?.details?.some((d) => d.in === field.in && d.field === field.name)) throw fail(`the 400 does not name ${field.in} field ${JSON.stringify(field.name)}`);
    if (allow) {
      const got = (response.headers.allow ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();
      if (got.join(',') !== [...allow].sort().join(',')) throw fail(`Allow ${JSON.stringify(response.headers.allow)}, expected ${allow.join(', ')}`);
    }
  }

  /** A 201 to a request the spec leaves open: keep the pet and check it reads back the same. */
  private async adoptCreated(response: WireResponse, wire: WireRequest): Promise<void> {
    const pet = parseJson(response.body);
    if (!pet.ok) throw new CaseFailure(`201 without a JSON body to ${describeWire(wire)}`);
    const created = pet.value as Pet;
    this.o.model.add(created);
    this.o.tally.created++;
    await this.readBack(created);
  }

  /** getPet of a pet just created answers exactly it: the whole object, every field. */
  private async readBack(expected: Pet, sentName?: string): Promise<void> {
    const wire: WireRequest = { method: 'GET', target: pathOf(this.o.contract, this.getPet, { petId: String(expected.id) }), headers: [['Authorization', `Bearer ${this.o.key}`]], transport: 'http' };
    const response = await this.send(this.getPet, 'valid', wire);
    const got = parseJson(response.body);
    if (response.status !== 200 || !got.ok) throw new CaseFailure(`getPet ${expected.id} after its 201 ${JSON.stringify(expected)} → ${show(response)}`);
    const mismatch = petMismatch(expected, got.value);
    if (mismatch) throw new CaseFailure(`getPet ${expected.id} after its 201 ${JSON.stringify(expected)} → ${show(response)}\n  ${mismatch}`);
    if (sentName !== undefined && !Buffer.from((got.value as Pet).name, 'utf8').equals(Buffer.from(sentName, 'utf8'))) throw new CaseFailure(`getPet ${expected.id}: the name's UTF-8 bytes differ from those sent`);
    this.o.tally.verified++;
  }

  async validCreate(c: ValidCreateCase): Promise<void> {
    const response = await this.send(this.createPet, 'valid', c.wire);
    const fail = (why: string) => new CaseFailure(`createPet [${c.family}] ${JSON.stringify(c.pet)}: ${describeWire(c.wire)}\n  → ${show(response)}\n  ${why}`);
    if (response.status !== 201) throw fail('expected 201');
    const body = parseJson(response.body);
    if (!body.ok) throw fail('201 body is not JSON');
    const pet = body.value as Pet;
    // What was sent, with the spec's defaults for what was not, and the assigned id: every field.
    const expected = expectedPet(pet.id, sentValue(c.pet), this.o.contract.document);
    const mismatch = petMismatch(expected, pet, this.serverAssigned);
    if (mismatch) throw fail(`expected ${JSON.stringify(expected)}: ${mismatch}`);
    if (!Buffer.from(pet.name, 'utf8').equals(Buffer.from(c.pet.name, 'utf8'))) throw fail("the name's UTF-8 bytes differ from those sent");
    const location = pathOf(this.o.contract, this.getPet, { petId: String(pet.id) });
    if (response.headers.location !== location) throw fail(`Location ${JSON.stringify(response.headers.location)}, expected ${location}`);
    this.o.model.add(pet);
    this.o.tally.created++;
    await this.readBack(pet, c.pet.name);
  }

  async validGet(c: ValidGetCase): Promise<void> {
    const response = await this.unconditional(this.getPet, c.wire, await this.send(this.getPet, 'valid', c.wire));
    const known = this.o.model.get(c.id);
    const body = parseJson(response.body);
    const fail = (why: string) => new CaseFailure(`getPet [${c.family}] id ${c.id}: ${describeWire(c.wire)}\n  → ${show(response)}\n  ${why}`);
    if (known) {
      if (response.status !== 200 || !body.ok) throw fail(`expected 200 with ${JSON.stringify(known)}`);
      const mismatch = petMismatch(known, body.value);
      if (mismatch) throw fail(`expected ${JSON.stringify(known)}: ${mismatch}`);
    } else if (response.status !== 404 || this.o.checker.errorBody(response)?.code !== 'not_found') throw fail('expected 404 not_found: no such pet');
  }

  async validList(c: ValidListCase): Promise<void> {
    // Every query parameter the spec declares must have a meaning the model knows (listModel.ts).
    const { limit, filters } = this.listQuery.interpret(c.query.params, (why) => new CaseFailure(`listPets [${c.family}] ${JSON.stringify(c.query)}: ${why}`));
    let afterId = c.query.cursor?.afterId;
    let wire = c.wire;
    for (let hop = 0; hop <= c.follow; hop++) {
      const response = await this.unconditional(this.listPets, wire, await this.send(this.listPets, 'valid', wire));
      const fail = (why: string) => new CaseFailure(`listPets [${c.family}] ${JSON.stringify(c.query)} hop ${hop}: ${describeWire(wire)}\n  → ${show(response)}\n  ${why}`);
      const body = parseJson(response.body);
      if (response.status !== 200 || !body.ok || !Array.isArray(body.value)) throw fail('expected 200 with a list');
      const expected = this.o.model.page(limit, filters, afterId);
      const got = body.value as unknown[];
      const gotIds = got.map((p) => (typeof p === 'object' && p !== null ? (p as { id?: unknown }).id : p));
      if (JSON.stringify(gotIds) !== JSON.stringify(expected.pets.map((p) => p.id))) throw fail(`expected the page ${JSON.stringify(expected.pets.map((p) => p.id))}`);
      // Each entry is the whole stored pet, every field.
      const mismatches = expected.pets.map((pet, i) => [pet.id, petMismatch(pet, got[i])] as const).filter(([, m]) => m !== '');
      if (mismatches.length > 0) throw fail(mismatches.map(([id, m]) => `pet ${id}: ${m}`).join('\n  '));
      const next = nextLink(response.headers.link ?? null);
      if ((next !== undefined) !== expected.hasMore) throw fail(expected.hasMore ? 'more pets exist but there is no Link rel="next"' : 'a Link rel="next" on the last page');
      if (next === undefined) return;
      const kept = this.listQuery.keptBy(new URL(next, this.o.origin).searchParams, limit, filters);
      if (kept.length > 0) throw fail(`the next link ${next} does not keep the query: ${kept.join('; ')}`);
      afterId = expected.pets.at(-1)?.id;
      wire = { method: 'GET', target: next, headers: c.wire.headers, transport: 'http' };
    }
  }

  /** The process runs and GET /healthz answers 200 {"status":"ok"}. */
  async healthy(): Promise<void> {
    if (!this.o.alive()) throw new Error(`the server process is gone:\n${this.o.output().slice(-3000)}`);
    const response = await this.o.wire.send({ method: 'GET', target: '/healthz', headers: [], transport: 'http' });
    const body = parseJson(response.body);
    if (response.status !== 200 || !body.ok || (body.value as { status?: unknown }).status !== 'ok') throw new Error(`/healthz answered ${show(response)}`);
  }

  /** The operation a case was generated for, by its id. */
  op(operationId: string): OperationSpec {
    return operation(this.o.contract, operationId);
  }
}
