/**
 * listPets requests, valid and invalid, from the operation's query parameters in the spec.
 * The cursor is opaque (its description says so): valid requests use only cursors the server
 * issued; schema-valid cursors it never issued are invalid (the spec makes them a 400).
 */
import fc from 'fast-check';
import { bodyNotAllowed, type InvalidCase, type IssuedCursor, type ValidListCase } from './cases.js';
import { benignHeaders, duplicateAuth, encodingStyle, malformedHttp, pathOf, queryString, unauthenticated, validAuth, wrongMethod, type Header } from './requestParts.js';
import { anyJson, invalidParameterText, validValue } from './schemaArbitrary.js';
import { serialize, type JsonValue } from './jsonText.js';
import { isOpaque, ListQueryModel } from './listModel.js';
import type { ContractSpec, OperationSpec, ParameterSpec } from './spec.js';
import type { WireRequest } from './wire.js';

export interface ListContext {
  contract: ContractSpec;
  op: OperationSpec;
  key: string;
  /** `host:port`, for requests written byte for byte. */
  authority: string;
  /** Cursors taken from real Link headers before the run. */
  issued: readonly IssuedCursor[];
}


function queryParams(op: OperationSpec): ParameterSpec[] {
  return op.parameters.filter((p) => p.in === 'query');
}

function wire(path: string, query: string, headers: Header[], body?: Buffer): WireRequest {
  const w: WireRequest = { method: 'GET', target: path + query, headers, transport: 'http' };
  if (body) w.body = body;
  return w;
}

export function validListCases(ctx: ListContext): fc.Arbitrary<ValidListCase> {
  const { contract, op } = ctx;
  const path = pathOf(contract, op);
  const plain = queryParams(op).filter((p) => !isOpaque(p));
  // The filters a cursor is bound to: it must come back with the filter it was issued for.
  const filters = new ListQueryModel(contract, op).filterNames();
  const values = fc.record(Object.fromEntries(plain.map((p) => [p.name, validValue(contract, p.schema)])), { requiredKeys: [] });
  const issued = ctx.issued.length > 0 ? fc.option(fc.constantFrom(...ctx.issued), { nil: undefined, freq: 3 }) : fc.constant(undefined);
  return fc
    .record({ values, issued, style: encodingStyle, auth: validAuth(ctx.key), extra: benignHeaders, follow: fc.nat({ max: 3 }), order: fc.nat() })
    .map(({ values: v, issued: cursor, style, auth, extra, follow, order }) => {
      // Every parameter sent is in the query the harness interprets (it fails on one it cannot).
      const params: Record<string, JsonValue> = {};
      for (const [name, value] of Object.entries(v)) if (value !== undefined) params[name] = value;
      const query: ValidListCase['query'] = { params };
      if (cursor) {
        // A cursor comes back with the status filter it was issued for, and no other filter.
        query.cursor = cursor;
        for (const name of filters) delete params[name];
        if (cursor.status !== undefined) params.status = cursor.status;
      }
      const pairs: Array<[string, string]> = Object.entries(params).map(([name, value]) => [name, String(value)]);
      if (cursor) pairs.push(['cursor', cursor.cursor]);
      // Parameter order carries no meaning.
      const rotated = pairs.map((_, i) => pairs[(i + order) % pairs.length] as [string, string]);
      return { family: `valid (${style})`, query, wire: wire(path, queryString(rotated, style), [auth, ...extra]), follow };
    });
}

export function invalidListCases(ctx: ListContext): fc.Arbitrary<InvalidCase> {
  const { contract, op, key } = ctx;
  const path = pathOf(contract, op);
  const params = queryParams(op);
  const auth: Header = ['Authorization', `Bearer ${key}`];
  const param = fc.constantFrom(...params);
  const reject400 = (name: string) => ({ kind: 'reject' as const, statuses: [400], code: 'validation_failed', field: { in: 'query', name } });

  const badValue = param.chain((p) =>
    fc.tuple(invalidParameterText(contract, p.schema), encodingStyle).map(([text, style]): InvalidCase => ({
      family: `query ${p.name}: invalid value`,
      wire: wire(path, queryString([[p.name, text]], style), [auth]),
      expect: reject400(p.name),
    })),
  );
  const cursorParam = params.find(isOpaque);
  const unissued: fc.Arbitrary<InvalidCase>[] = [];
  if (cursorParam) {
    unissued.push(
      validValue(contract, cursorParam.schema).map((c) => ({ family: 'cursor never issued', wire: wire(path, queryString([[cursorParam.name, String(c)]]), [auth]), expect: reject400(cursorParam.name) })),
    );
    if (ctx.issued.length > 0) {
      const statuses = (contract.resolve(params.find((p) => p.name === 'status')?.schema ?? {}).enum ?? []) as string[];
      unissued.push(
        fc.tuple(fc.constantFrom(...ctx.issued), fc.constantFrom<string | undefined>(undefined, ...statuses)).filter(([c, s]) => c.status !== s).map(([c, s]) => ({
          family: 'cursor with another status filter',
          wire: wire(path, queryString(s === undefined ? [['cursor', c.cursor]] : [['cursor', c.cursor], ['status', s]]), [auth]),
          expect: reject400(cursorParam.name),
        })),
        // Changing the first character changes the first decoded byte, so the signature no longer fits.
        fc.constantFrom(...ctx.issued).map((c) => ({
          family: 'tampered cursor',
          wire: wire(path, queryString([['cursor', (c.cursor[0] === 'e' ? 'f' : 'e') + c.cursor.slice(1)], ...(c.status ? [['status', c.status] as [string, string]] : [])]), [auth]),
          expect: reject400(cursorParam.name),
        })),
      );
    }
  }
  const repeated = fc.tuple(param.filter((p) => !isOpaque(p)), fc.integer({ min: 2, max: 3 })).chain(([p, n]) =>
    fc.array(validValue(contract, p.schema), { minLength: n, maxLength: n }).map((vs): InvalidCase => ({
      family: `query ${p.name} repeated`,
      wire: wire(path, queryString(vs.map((v) => [p.name, String(v)])), [auth]),
      expect: reject400(p.name),
    })),
  );
  const empty = fc.tuple(param, fc.boolean()).map(([p, bare]): InvalidCase => ({
    family: `query ${p.name} ${bare ? 'bare' : 'empty'}`,
    wire: wire(path, queryString([[p.name, bare ? null : '']]), [auth]),
    expect: reject400(p.name),
  }));
  const badPercent = fc.tuple(param, fc.constantFrom('%zz', '%', '%4', '%E0%A4%A', '%C3', '%ED%A0%80', '%FF', '%C0%AF', '1%')).map(([p, v]): InvalidCase => ({
    family: `query ${p.name}: malformed percent-encoding`,
    wire: wire(path, `?${p.name}=${v}`, [auth]),
    expect: { kind: 'reject', statuses: [400] },
  }));
  const names = params.map((p) => p.name);
  // Unknown query parameters are a 400 (docs/contract.md, "Decisions where the interface document
  // is silent"): validation_failed naming the parameter. A name with brackets is read the way the
  // query parser reads it (`a[b]` is `a`, `limit[]` is `limit` as an array), so the 400 names that:
  // only its status and code are pinned.
  // A pair without a name (`?=x`) is not a parameter at all: the 'odd query string' family has it.
  const unknown = fc
    .tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'offset', 'page', 'LIMIT', 'limit[]', 'status[0]', 'a.b'), fc.string({ minLength: 1, maxLength: 6 })), fc.string({ maxLength: 6 }))
    .filter(([n]) => !names.includes(n))
    .map(([n, v]): InvalidCase => ({
      family: 'unknown query parameter',
      wire: wire(path, queryString([[n, v]]), [auth]),
      expect: /[[\]]/.test(n) ? { kind: 'reject', statuses: [400], code: 'validation_failed' } : reject400(n),
    }));
  const odd = fc.constantFrom('?', '?&', '?&&&', '?=', '?=1', '?&=&', '?;', '?+').map((q): InvalidCase => ({ family: 'odd query string', wire: wire(path, q, [auth]), expect: { kind: 'any' } }));
  // A body on a GET is refused unread: 400 validation_failed naming the body (this operation takes
  // none); it must change nothing. (Non-JSON media types on a GET: regressions.ts, mediaTypeBeforeRouting.)
  const withBody = anyJson.map((v): InvalidCase => ({ family: 'GET with a JSON body', wire: wire(path, '', [auth, ['Content-Type', 'application/json']], Buffer.from(serialize(v))), expect: bodyNotAllowed }));
  const dupAuth = duplicateAuth(key).map((headers): InvalidCase => ({ family: 'duplicate Authorization', wire: wire(path, '?limit=2', headers), expect: { kind: 'any' } }));
  const anyValid = validListCases(ctx).map((c) => c.wire);

  const weighted: Array<{ arbitrary: fc.Arbitrary<InvalidCase>; weight: number }> = [
    { arbitrary: badValue, weight: 6 },
    { arbitrary: repeated, weight: 2 },
    { arbitrary: empty, weight: 2 },
    { arbitrary: badPercent, weight: 1 },
    { arbitrary: unknown, weight: 2 },
    { arbitrary: odd, weight: 1 },
    { arbitrary: withBody, weight: 1 },
    { arbitrary: dupAuth, weight: 1 },
    { arbitrary: wrongMethod(contract, op, path, key), weight: 1 },
    { arbitrary: unauthenticated(key, anyValid), weight: 3 },
    { arbitrary: malformedHttp(ctx.authority, path, key), weight: 1 },
  ];
  if (unissued.length > 0) weighted.push({ arbitrary: fc.oneof(...unissued), weight: 2 });
  return fc.oneof(...weighted);
}
