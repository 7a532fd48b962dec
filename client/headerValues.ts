/**
 * One parser per kind of header value (client/generated/operations.ts names the kind of every header the
 * spec declares). Each takes the field value as `Headers.get` gives it and returns the value, or
 * undefined when the text is not of that kind: a bad header never throws, it reads as absent.
 */
import { parseItem, parseList, Token, type BareItem } from 'structured-headers';
import type { HeaderKind } from './generated/operations.js';
import { parseLinkTargets } from './linkHeader.js';

/** What the spec says about one header (a member of `operationHeaders` in client/generated/operations.ts). */
export interface HeaderFact {
  readonly header: string;
  readonly kind: HeaderKind;
  readonly required: boolean;
  readonly values?: readonly string[];
  readonly rels?: readonly string[];
  readonly rel?: string;
  readonly parameter?: string;
}

/** `RateLimit: "per-key";r=42;t=17`: requests left in the window, and seconds until it resets. */
export interface RateLimit {
  policy: string;
  remaining: number;
  reset: number;
}
/** `RateLimit-Policy: "per-key";q=100;w=60`: the quota of requests per window of seconds. */
export interface RateLimitPolicy {
  policy: string;
  quota: number;
  window: number;
}

/** Where the response came from (`Response.url`), to resolve relative link targets against. */
interface Context {
  url: string;
}
type Parser<T> = (field: string, fact: HeaderFact, context: Context) => T | undefined;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const SHORT_DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})';
/** RFC 9110 §5.6.7: IMF-fixdate, which senders use, and the two obsolete forms recipients must accept. */
const HTTP_DATES = {
  imf: new RegExp(`^${SHORT_DAY}, ([0-9]{2}) ${MONTH} ([0-9]{4}) ${TIME} GMT$`),
  rfc850: new RegExp(`^${LONG_DAY}, ([0-9]{2})-${MONTH}-([0-9]{2}) ${TIME} GMT$`),
  asctime: new RegExp(`^${SHORT_DAY} ${MONTH} ([ 0-9][0-9]) ${TIME} ([0-9]{4})$`),
};

/** A UTC instant from its parts, or undefined when they name no real time (31 Feb, 25:00). */
function utc(year: number, month: string, day: number, hours: number, minutes: number, seconds: number): Date | undefined {
  const monthIndex = MONTHS.indexOf(month);
  const date = new Date(Date.UTC(year, monthIndex, day, hours, minutes, seconds));
  const same = date.getUTCFullYear() === year && date.getUTCMonth() === monthIndex && date.getUTCDate() === day && date.getUTCHours() === hours && date.getUTCMinutes() === minutes && date.getUTCSeconds() === seconds;
  return same ? date : undefined;
}

function parseHttpDate(field: string): Date | undefined {
  const n = Number;
  let m = HTTP_DATES.imf.exec(field);
  if (m) return utc(n(m[3]), m[2]!, n(m[1]), n(m[4]), n(m[5]), n(m[6]));
  m = HTTP_DATES.rfc850.exec(field);
  if (m) {
    // RFC 9110 §5.6.7: a two-digit year more than 50 years ahead is in the past century.
    const thisYear = new Date().getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + n(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[2]!, n(m[1]), n(m[4]), n(m[5]), n(m[6]));
  }
  m = HTTP_DATES.asctime.exec(field);
  if (m) return utc(n(m[6]), m[1]!, n(m[2]!.trim()), n(m[3]), n(m[4]), n(m[5]));
  return undefined;
}

/**
 * A Structured Field (RFC 9651), or undefined: the library throws on a field that does not parse,
 * and RFC 9651 §4.2 has a recipient ignore such a field whole.
 */
function structured<T>(parse: (field: string) => T, field: string): T | undefined {
  try {
    return parse(field);
  } catch {
    return undefined;
  }
}

/** RFC 9745 (Deprecation) and RFC 9651 §3.3.7: a Date item, `@` and whole seconds since the epoch. */
function parseStructuredDate(field: string): Date | undefined {
  const value = structured(parseItem, field)?.[0];
  // 15 digits of seconds parse, but past ±8.64e12 s no Date holds them (RFC 9651 lets that fail).
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value : undefined;
}

/** RFC 3339 date-time (`format: date-time`). */
function parseDateTime(field: string): Date | undefined {
  if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})$/.test(field)) return undefined;
  const at = Date.parse(field);
  return Number.isNaN(at) ? undefined : new Date(at);
}

function parseNumber(field: string): number | undefined {
  return /^-?[0-9]+(?:\.[0-9]+)?$/.test(field) ? Number(field) : undefined;
}

/** `true`/`false` as the spec's enums write a flag, or a Structured Field Boolean (`?1`/`?0`). */
function parseFlag(field: string): boolean | undefined {
  if (field === 'true') return true;
  if (field === 'false') return false;
  const value = structured(parseItem, field)?.[0];
  return typeof value === 'boolean' ? value : undefined;
}

/** RFC 9110 §10.2.3 Retry-After: delay-seconds, or an HTTP-date (as the seconds until it, at least 0). */
function parseDelaySeconds(field: string): number | undefined {
  if (/^[0-9]+$/.test(field)) {
    const seconds = Number(field);
    return Number.isSafeInteger(seconds) ? seconds : undefined;
  }
  const date = parseHttpDate(field);
  return date ? Math.max(0, Math.ceil((date.getTime() - Date.now()) / 1000)) : undefined;
}

/** RFC 9110 §8.8.3 entity-tag, kept exactly as sent: the spec calls it opaque, to compare and never to parse. */
function parseEtag(field: string): string | undefined {
  return /^(?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*"$/.test(field) ? field : undefined;
}

/** A link target made absolute against the response's URL when there is one (a mocked fetch may have none). */
function resolveTarget(target: string, context: Context): string {
  if (!context.url) return target;
  try {
    return new URL(target, context.url).href;
  } catch {
    return target;
  }
}

function parseLink(field: string, _fact: HeaderFact, context: Context): Record<string, string> | undefined {
  const targets = parseLinkTargets(field);
  if (!targets) return undefined;
  return Object.fromEntries(Object.entries(targets).map(([rel, target]) => [rel, resolveTarget(target, context)]));
}

/** The cursor query parameter of the `rel` link (`Link: </v1/pets?limit=2&cursor=abc>; rel="next"` gives `abc`). */
function parseNextCursor(field: string, fact: HeaderFact): string | undefined {
  const target = parseLinkTargets(field)?.[fact.rel ?? 'next'];
  if (target === undefined || !fact.parameter) return undefined;
  try {
    // Only the query is read; the base makes a relative target a URL.
    return new URL(target, 'http://link.invalid/').searchParams.get(fact.parameter) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * The first member of a RateLimit field list that names a policy (a String or Token) and whose
 * parameters `keys` are all non-negative integers. Other members, inner lists and byte sequences
 * included, are valid and skipped: another party's policies may share the field.
 */
function rateLimitMember<K extends string>(field: string, keys: readonly K[]): { policy: string; values: Record<K, number> } | undefined {
  const isCount = (value: BareItem | undefined): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
  for (const [item, params] of structured(parseList, field) ?? []) {
    if (typeof item !== 'string' && !(item instanceof Token)) continue;
    const values = keys.map((key) => params.get(key));
    if (values.every(isCount)) return { policy: item.toString(), values: Object.fromEntries(keys.map((key, i) => [key, values[i]])) as Record<K, number> };
  }
  return undefined;
}

function parseRateLimit(field: string): RateLimit | undefined {
  const member = rateLimitMember(field, ['r', 't']);
  return member && { policy: member.policy, remaining: member.values.r, reset: member.values.t };
}

function parseRateLimitPolicy(field: string): RateLimitPolicy | undefined {
  const member = rateLimitMember(field, ['q', 'w']);
  return member && { policy: member.policy, quota: member.values.q, window: member.values.w };
}

/** Any other header: its text, or, when the spec enumerates its values, one of them. */
function parseString(field: string, fact: HeaderFact): string | undefined {
  return !fact.values || fact.values.includes(field) ? field : undefined;
}

/** A parser for every kind the generator may name: a kind added there and not here is a compile error. */
export const headerParsers = {
  string: parseString,
  number: parseNumber,
  flag: parseFlag,
  etag: parseEtag,
  link: parseLink,
  nextCursor: parseNextCursor,
  rateLimit: parseRateLimit,
  rateLimitPolicy: parseRateLimitPolicy,
  httpDate: parseHttpDate,
  structuredDate: parseStructuredDate,
  dateTime: parseDateTime,
  delaySeconds: parseDelaySeconds,
} satisfies { [K in HeaderKind]: Parser<unknown> };

/** The type of a parsed value of each kind. */
export type KindValue<K extends HeaderKind> = NonNullable<ReturnType<(typeof headerParsers)[K]>>;
