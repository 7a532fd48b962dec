/**
 * Sends generated cases to the running server and checks each answer: first the properties
 * every response has (responseContract), then what the case itself expects — a refusal with the
 * right status, code and field, or for valid requests the exact answer the store model predicts,
 * including the byte-for-byte round trip of a created pet.
 */
import { nextLink, type Pet } from '../../../../client/index.js';
import { describeWire, type InvalidCase, type ValidCreateCase, type ValidGetCase, type ValidListCase } from './cases.js';
import type { StoreModel } from './model.js';
import { parseJson, type ResponseContract } from './responseContract.js';
import { pathOf } from './requestParts.js';
import { operation, parameter, type ContractSpec, type OperationSpec } from './spec.js';
import type { Kind, Tally } from './tally.js';
import { TransportFailure, type Wire, type WireRequest, type WireResponse } from './wire.js';

export class CaseFailure extends Error {}

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

function samePet(a: unknown, b: Pet): boolean {
  return JSON.stringify(a) === JSON.stringify({ id: b.id, name: b.name, categoryId: b.categoryId, status: b.status });
}

export class Harness {
  private readonly listPets: OperationSpec;
  private readonly createPet: OperationSpec;
  private readonly getPet: OperationSpec;
  private readonly defaultLimit: number;
  private readonly defaultStatus: string;

  constructor(private readonly o: HarnessOptions) {
    this.listPets = operation(o.contract, 'listPets');
    this.createPet = operation(o.contract, 'createPet');
    this.getPet = operation(o.contract, 'getPet');
    this.defaultLimit = Number(o.contract.resolve(parameter(this.listPets, 'limit').schema).default);
    const body = o.contract.resolve(this.createPet.requestBody?.schema ?? {});
    this.defaultStatus = String(o.contract.resolve(body.properties?.status ?? {}).default);
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

  async invalid(op: OperationSpec, c: InvalidCase): Promise<void> {
    const response = await this.send(op, 'invalid', c.wire);
    // Whatever was expected, a pet that was created is in the store now: the model must know.
    if (response.status === 201) await this.adoptCreated(response, c.wire);
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

  /** getPet of a pet just created answers exactly it, same bytes. */
  private async readBack(expected: Pet, sentName?: string): Promise<void> {
    const wire: WireRequest = { method: 'GET', target: pathOf(this.o.contract, this.getPet, { petId: String(expected.id) }), headers: [['Authorization', `Bearer ${this.o.key}`]], transport: 'http' };
    const response = await this.send(this.getPet, 'valid', wire);
    const got = parseJson(response.body);
    if (response.status !== 200 || !got.ok || !samePet(got.value, expected)) throw new CaseFailure(`getPet ${expected.id} after its 201 ${JSON.stringify(expected)} → ${show(response)}`);
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
    const expected: Pet = { id: pet.id, name: c.pet.name, categoryId: c.pet.categoryId, status: (c.pet.status ?? this.defaultStatus) as Pet['status'] };
    if (!samePet(pet, expected)) throw fail(`expected ${JSON.stringify(expected)}`);
    if (!Buffer.from(pet.name, 'utf8').equals(Buffer.from(c.pet.name, 'utf8'))) throw fail("the name's UTF-8 bytes differ from those sent");
    const location = pathOf(this.o.contract, this.getPet, { petId: String(pet.id) });
    if (response.headers.location !== location) throw fail(`Location ${JSON.stringify(response.headers.location)}, expected ${location}`);
    this.o.model.add(pet);
    this.o.tally.created++;
    await this.readBack(pet, c.pet.name);
  }

  async validGet(c: ValidGetCase): Promise<void> {
    const response = await this.send(this.getPet, 'valid', c.wire);
    const known = this.o.model.get(c.id);
    const body = parseJson(response.body);
    const fail = (why: string) => new CaseFailure(`getPet [${c.family}] id ${c.id}: ${describeWire(c.wire)}\n  → ${show(response)}\n  ${why}`);
    if (known) {
      if (response.status !== 200 || !body.ok || !samePet(body.value, known)) throw fail(`expected 200 with ${JSON.stringify(known)}`);
    } else if (response.status !== 404 || this.o.checker.errorBody(response)?.code !== 'not_found') throw fail('expected 404 not_found: no such pet');
  }

  async validList(c: ValidListCase): Promise<void> {
    const limit = c.query.limit ?? this.defaultLimit;
    let afterId = c.query.cursor?.afterId;
    let wire = c.wire;
    for (let hop = 0; hop <= c.follow; hop++) {
      const response = await this.send(this.listPets, 'valid', wire);
      const fail = (why: string) => new CaseFailure(`listPets [${c.family}] ${JSON.stringify(c.query)} hop ${hop}: ${describeWire(wire)}\n  → ${show(response)}\n  ${why}`);
      const body = parseJson(response.body);
      if (response.status !== 200 || !body.ok) throw fail('expected 200');
      const expected = this.o.model.page(limit, c.query.status, afterId);
      if (JSON.stringify(body.value) !== JSON.stringify(expected.pets)) throw fail(`expected the page ${JSON.stringify(expected.pets.map((p) => p.id))}`);
      const next = nextLink(response.headers.link ?? null);
      if ((next !== undefined) !== expected.hasMore) throw fail(expected.hasMore ? 'more pets exist but there is no Link rel="next"' : 'a Link rel="next" on the last page');
      if (next === undefined) return;
      const params = new URL(next, this.o.origin).searchParams;
      if (params.get('limit') !== String(limit) || (params.get('status') ?? undefined) !== c.query.status) throw fail(`the next link ${next} does not keep limit ${limit} and status ${String(c.query.status)}`);
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
