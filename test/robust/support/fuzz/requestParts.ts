/**
 * Pieces shared by the three operations' generators: Authorization headers (valid spellings and
 * broken ones), headers that must not change the outcome, percent-encoding styles, and requests
 * with a method the path does not have.
 */
import fc from 'fast-check';
import type { InvalidCase } from './cases.js';
import type { ContractSpec, OperationSpec } from './spec.js';
import { rawRequestBytes, type WireRequest } from './wire.js';

export type Header = readonly [string, string];

/**
 * Spellings of a good key that RFC 6750 makes equivalent: the scheme name is case-insensitive
 * and may be followed by more than one space.
 */
export function validAuth(key: string): fc.Arbitrary<Header> {
  return fc.constantFrom<Header>(['Authorization', `Bearer ${key}`], ['authorization', `bearer ${key}`], ['AUTHORIZATION', `BEARER ${key}`], ['Authorization', `bEaReR   ${key}`]);
}

/** Keys that are missing, malformed, unknown, or not sent as a bearer token: each a 401. */
interface AuthAttempt {
  headers: Header[];
  why: string;
}

export function invalidAuth(key: string): fc.Arbitrary<AuthAttempt> {
  const flipAt = fc.nat({ max: key.length - 5 }).map((i) => {
    const at = 4 + i; // past the `ask_` prefix, so the key stays well-formed but unknown
    const c = key[at] === 'A' ? 'B' : 'A';
    return `${key.slice(0, at)}${c}${key.slice(at + 1)}`;
  });
  const b64url = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);
  return fc.oneof<fc.Arbitrary<AuthAttempt>[]>(
    fc.constant<AuthAttempt>({ headers: [], why: 'no Authorization' }),
    fc.constantFrom<AuthAttempt>(
      { headers: [['Authorization', '']] as Header[], why: 'empty Authorization' },
      { headers: [['Authorization', 'Bearer']] as Header[], why: 'scheme only' },
      { headers: [['Authorization', 'Bearer ']] as Header[], why: 'scheme and a space' },
      { headers: [['Authorization', key]] as Header[], why: 'the key without a scheme' },
      { headers: [['Authorization', `Bearer${key}`]] as Header[], why: 'no space after the scheme' },
      { headers: [['Authorization', `Bearer\t${key}`]] as Header[], why: 'a tab after the scheme' },
      { headers: [['Authorization', `Basic ${Buffer.from(`user:${key}`).toString('base64')}`]] as Header[], why: 'Basic' },
      { headers: [['Authorization', `Token ${key}`]] as Header[], why: 'another scheme' },
      { headers: [['Authorization', `Bearer ${key} ${key}`]] as Header[], why: 'two tokens' },
      { headers: [['Authorization', `Bearer ${key.toUpperCase()}`]] as Header[], why: 'the token upper-cased (tokens are case-sensitive)' },
      { headers: [['Authorization', `Bearer ${key.slice(0, -1)}`]] as Header[], why: 'a truncated key' },
      { headers: [['Authorization', `Bearer ${key}x`]] as Header[], why: 'a key one character too long' },
      { headers: [['X-Api-Key', key]] as Header[], why: 'the key in another header' },
    ),
    flipAt.map((k) => ({ headers: [['Authorization', `Bearer ${k}`]] as Header[], why: 'an unknown well-formed key' })),
    b64url.map((k) => ({ headers: [['Authorization', `Bearer ask_${k}`]] as Header[], why: 'a random well-formed key' })),
    fc.string({ minLength: 1, maxLength: 60, unit: fc.oneof(fc.integer({ min: 0x21, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff })).map((c) => String.fromCharCode(c)) }).map((t) => ({ headers: [['Authorization', `Bearer ${t}`]] as Header[], why: 'a random token' })),
  );
}

/**
 * Two Authorization headers, good and bad in either order. RFC 9110 allows one; node:http keeps
 * the first. The spec says nothing, so only the universal properties are asserted.
 */
export function duplicateAuth(key: string): fc.Arbitrary<Header[]> {
  const one = fc.constantFrom(`Bearer ${key}`, `bearer ${key}`, 'Bearer ask_x', 'Basic abc', '');
  return fc.tuple(one, one).map(([a, b]) => [
    ['Authorization', a],
    ['Authorization', b],
  ]);
}

/** Headers a client may add that must change nothing about the outcome. */
export const benignHeaders: fc.Arbitrary<Header[]> = fc.subarray<Header>([
  ['Accept', 'text/html, */*;q=0.1'],
  ['Accept', 'application/xml, */*;q=0.1'],
  ['Accept-Charset', 'iso-8859-1'],
  ['Accept-Encoding', 'gzip, br'],
  ['X-Request-Id', 'fuzz-req.1_2-3'],
  ['X-Request-Id', '../../etc/passwd'],
  ['X-Forwarded-For', '10.0.0.1, 203.0.113.7'],
  ['User-Agent', 'fuzz/1.0 (caf\u00e9)'],
  ['Cookie', 'session=1; __proto__=x'],
  ['X-HTTP-Method-Override', 'DELETE'],
  ['If-None-Match', '*'],
  ['Origin', 'https://evil.example'],
]);

/** Percent-encodes every UTF-8 byte: `1` becomes `%31`, the same text once decoded. */
export function encodeAll(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/**
 * Percent-encodes all but the unreserved ASCII characters, from UTF-8 (a lone surrogate becomes
 * U+FFFD's bytes, as a client's encoder would write it; encodeURIComponent would throw).
 */
export function encodeText(text: string): string {
  return [...Buffer.from(text, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

export type EncodingStyle = 'plain' | 'everyByte' | 'names';

export const encodingStyle: fc.Arbitrary<EncodingStyle> = fc.constantFrom('plain', 'everyByte', 'names');

/** A query string from name/value pairs (`null` value: the bare name, no `=`). */
export function queryString(pairs: ReadonlyArray<readonly [string, string | null]>, style: EncodingStyle = 'plain'): string {
  if (pairs.length === 0) return '';
  const enc = (s: string) => (style === 'everyByte' ? encodeAll(s) : encodeText(s));
  const encName = (s: string) => (style === 'plain' ? encodeText(s) : encodeAll(s));
  return `?${pairs.map(([n, v]) => (v === null ? encName(n) : `${encName(n)}=${enc(v)}`)).join('&')}`;
}

/** A path segment for `text`: `.` and `..` encoded too, so no client or proxy resolves them away. */
export function segment(text: string): string {
  const encoded = encodeText(text);
  return encoded === '.' || encoded === '..' ? encoded.replace(/\./g, '%2E') : encoded;
}

/** The path of `op` under the base path, with path parameters filled in (already encoded). */
export function pathOf(contract: ContractSpec, op: OperationSpec, params: Record<string, string> = {}): string {
  return contract.basePath + op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name}`);
    return value;
  });
}

/** Methods that the path of `op` does not have: a 405 whose Allow lists the ones it does. */
export function wrongMethod(contract: ContractSpec, op: OperationSpec, target: string, key: string): fc.Arbitrary<InvalidCase> {
  const allowed = contract.methodsByPath[op.path] ?? [];
  const others = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.includes(m));
  return fc.tuple(fc.constantFrom(...others), fc.boolean()).map(([method, withBody]) => {
    // No body is said with Content-Length: 0; node:http would otherwise frame an empty chunked
    // body, which the server takes for a body (see regressions.ts: mediaTypeBeforeRouting).
    const wire: WireRequest = { method, target, headers: [['Authorization', `Bearer ${key}`], ['Content-Length', '0']], transport: 'http' };
    if (withBody) {
      wire.headers = wire.headers.filter(([n]) => n !== 'Content-Length');
      wire.headers = [...wire.headers, ['Content-Type', 'application/json']];
      wire.body = Buffer.from('{"name":"x","categoryId":1}');
    }
    return { family: 'method not allowed', wire, expect: { kind: 'reject', statuses: [405], allow: allowed } };
  });
}

/** Requests with a bad key, any body: refused with 401 before anything else is looked at. */
export function unauthenticated(key: string, base: fc.Arbitrary<WireRequest>): fc.Arbitrary<InvalidCase> {
  return fc.tuple(base, invalidAuth(key)).map(([wire, auth]) => ({
    family: `bad key: ${auth.why}`,
    wire: { ...wire, headers: [...wire.headers.filter(([n]) => n.toLowerCase() !== 'authorization'), ...auth.headers] },
    expect: { kind: 'reject', statuses: [401] },
  }));
}

/**
 * Requests that are not well-formed HTTP/1.1, written byte for byte over a fresh socket: control
 * bytes in a header value, raw bytes ≥ 0x80 or a space in the target, two different
 * Content-Lengths, a header name with a space. node:http refuses to write any of these.
 */
export function malformedHttp(authority: string, path: string, key: string): fc.Arbitrary<InvalidCase> {
  const auth: readonly [string, string] = ['Authorization', `Bearer ${key}`];
  const variants: Array<() => Buffer> = [
    () => rawRequestBytes('GET', path, authority, [auth, ['X-Note', Buffer.from('a\u0000b', 'latin1')]]),
    () => rawRequestBytes('GET', path, authority, [auth, ['X-Note', Buffer.from('a\rb', 'latin1')]]),
    () => rawRequestBytes('GET', Buffer.from(`${path}?status=\xff`, 'latin1'), authority, [auth]),
    () => rawRequestBytes('GET', Buffer.from(`${path}/\xe9`, 'latin1'), authority, [auth]),
    () => rawRequestBytes('GET', `${path}?status=a b`, authority, [auth]),
    () => rawRequestBytes('POST', path, authority, [auth, ['Content-Type', 'application/json'], ['Content-Length', '27'], ['Content-Length', '28']], Buffer.from('{"name":"a","categoryId":1}')),
    () => rawRequestBytes('GET', path, authority, [auth, ['X Bad', '1']]),
  ];
  return fc.constantFrom(...variants.keys()).map((i): InvalidCase => {
    const bytes = (variants[i] as () => Buffer)();
    return { family: 'not well-formed HTTP/1.1', wire: { method: 'RAW', target: path, headers: [], transport: 'raw', rawBytes: bytes }, expect: { kind: 'reject', statuses: [400] } };
  });
}
