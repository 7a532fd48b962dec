/**
 * getPet requests: ids the store has, any id the schema allows (mostly 404s, with both bounds),
 * and path values the schema refuses; plus wrong methods, bad keys and stray bodies.
 */
import fc from 'fast-check';
import { bodyNotAllowed, type InvalidCase, type ValidGetCase } from './cases.js';
import { serialize } from './jsonText.js';
import { benignHeaders, duplicateAuth, encodeAll, pathOf, segment, unauthenticated, validAuth, wrongMethod, type Header } from './requestParts.js';
import { anyJson, invalidParameterText, validValue } from './schemaArbitrary.js';
import { parameter, type ContractSpec, type OperationSpec } from './spec.js';
import type { WireRequest } from './wire.js';

export interface GetContext {
  contract: ContractSpec;
  op: OperationSpec;
  key: string;
  /** Ids of pets the store holds when the run starts. */
  knownIds: readonly number[];
}

function pathParameterName(op: OperationSpec): string {
  const p = op.parameters.find((x) => x.in === 'path');
  if (!p) throw new Error(`${op.operationId} has no path parameter`);
  return p.name;
}

function get(target: string, headers: Header[]): WireRequest {
  return { method: 'GET', target, headers, transport: 'http' };
}

export function validGetCases(ctx: GetContext): fc.Arbitrary<ValidGetCase> {
  const { contract, op } = ctx;
  const name = pathParameterName(op);
  const schema = parameter(op, name).schema;
  const anyId = validValue(contract, schema) as fc.Arbitrary<number>;
  const id = ctx.knownIds.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...ctx.knownIds), weight: 3 }, { arbitrary: anyId, weight: 2 }) : anyId;
  return fc.record({ id, everyByte: fc.boolean(), auth: validAuth(ctx.key), extra: benignHeaders }).map(({ id: n, everyByte, auth, extra }) => ({
    family: everyByte ? 'valid (percent-encoded id)' : 'valid',
    id: n,
    wire: get(pathOf(contract, op, { [name]: everyByte ? encodeAll(String(n)) : String(n) }), [auth, ...extra]),
  }));
}

export function invalidGetCases(ctx: GetContext): fc.Arbitrary<InvalidCase> {
  const { contract, op, key } = ctx;
  const name = pathParameterName(op);
  const schema = parameter(op, name).schema;
  const auth: Header = ['Authorization', `Bearer ${key}`];
  const somePath = (value: string) => pathOf(contract, op, { [name]: value });

  // An empty id would be the list path, another operation: not drawn.
  const badId = invalidParameterText(contract, schema)
    .filter((t) => t !== '')
    .map((text): InvalidCase => ({
      family: `path ${name}: invalid value`,
      wire: get(somePath(segment(text)), [auth]),
      expect: { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'path', name } },
    }));
  const longDigits = fc.integer({ min: 17, max: 2000 }).map((n): InvalidCase => ({
    family: `path ${name}: ${n} digits`,
    wire: get(somePath('9'.repeat(n)), [auth]),
    expect: { kind: 'reject', statuses: [400], code: 'validation_failed', field: { in: 'path', name } },
  }));
  const badPercent = fc.constantFrom('%zz', '%', '%4', '%E0%A4%A', '%C3', '%ED%A0%80', '%FF', '1%', '%00').map((segment): InvalidCase => ({
    family: `path ${name}: malformed percent-encoding`,
    wire: get(somePath(segment), [auth]),
    expect: { kind: 'reject', statuses: [400] },
  }));
  const otherShape = fc.constantFrom('/1/x', '/1/', '//1', '/1%2F2', '/1;x=1', '/1?x=1', '/1?petId=2', '/%2E%2E', '/1/..').map((suffix): InvalidCase => ({
    family: 'odd path or query',
    wire: get(`${contract.basePath}${op.path.replace(/\/\{[^}]+\}$/, '')}${suffix}`, [auth]),
    expect: { kind: 'any' },
  }));
  // Refused unread, as on listPets: 400 naming the body, whether or not the pet exists.
  const withBody = anyJson.map((v): InvalidCase => ({ family: 'GET with a JSON body', wire: { ...get(somePath('1'), [auth, ['Content-Type', 'application/json']]), body: Buffer.from(serialize(v)) }, expect: bodyNotAllowed }));
  const dupAuth = duplicateAuth(key).map((headers): InvalidCase => ({ family: 'duplicate Authorization', wire: get(somePath('1'), headers), expect: { kind: 'any' } }));
  const anyValid = validGetCases(ctx).map((c) => c.wire);

  return fc.oneof(
    { arbitrary: badId, weight: 8 },
    { arbitrary: longDigits, weight: 1 },
    { arbitrary: badPercent, weight: 1 },
    { arbitrary: otherShape, weight: 1 },
    { arbitrary: withBody, weight: 1 },
    { arbitrary: dupAuth, weight: 1 },
    { arbitrary: wrongMethod(contract, op, somePath('1'), key), weight: 1 },
    { arbitrary: unauthenticated(key, anyValid), weight: 3 },
  );
}
