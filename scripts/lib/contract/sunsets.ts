/**
 * The contract's calendar: when a deprecated operation's sunset (`x-sunset`) has passed, for the
 * breaking-change gate (scripts/breaking.ts: removing such an operation is no break) and for the
 * `sunset calendar` step of `npm run lint` (scripts/lint.ts: warn before the sunset, fail after it
 * while the operation is still in the spec).
 *
 * Both judge a day, not an instant, so that a run's verdict does not depend on its hour: today's
 * date in UTC, or CONTRACT_DATE=YYYY-MM-DD. A sunset has passed on a day when its instant is at or
 * before 00:00 UTC of that day. The server answers an operation 410 from its sunset instant on
 * (src/features/deprecation/), so on such a day it answers 410 for the whole day, and no client can
 * still get anything else from it; a sunset later in the day counts from the next day.
 */
import { isoInstant } from '../../../src/shared/instant.js';
import { isNode, operationsOf } from '../operations.js';
import { loadContract } from './contractDiff.js';

export const CONTRACT_DATE = 'CONTRACT_DATE';
/** How long before its sunset the lint step starts warning about a deprecated operation. */
export const WARNING_DAYS = 90;

const DAY_MS = 24 * 60 * 60 * 1000;
/** YYYY-MM-DD of the UTC day holding the instant `at`. */
const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/** The day the rules are judged on. */
export interface ContractDay {
  /** YYYY-MM-DD. */
  date: string;
  /** 00:00 UTC of that day, in ms since the epoch. */
  start: number;
}

/** CONTRACT_DATE that is not a calendar date in the expected form. */
export class ContractDateError extends Error {}

/** CONTRACT_DATE when set, else today's date in UTC; throws ContractDateError for a value that is not YYYY-MM-DD. */
export function contractDay(env: Readonly<Record<string, string | undefined>> = process.env, now: number = Date.now()): ContractDay {
  const value = env[CONTRACT_DATE];
  if (value === undefined || value === '') return { date: dayOf(now), start: Math.floor(now / DAY_MS) * DAY_MS };
  const start = dayStart(value);
  if (Number.isNaN(start)) throw new ContractDateError(`${CONTRACT_DATE} must be a calendar date in the form YYYY-MM-DD (a UTC day, e.g. 2030-12-06), not ${JSON.stringify(value)}.`);
  return { date: value, start };
}

/** 00:00 UTC of `value` when it is a calendar date written YYYY-MM-DD, else NaN. */
export function dayStart(value: string): number {
  const start = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  // Date.parse rolls 2030-02-30 over to March; a date that does not round-trip is not one.
  return !Number.isNaN(start) && dayOf(start) === value ? start : Number.NaN;
}

/** One operation of a document, with its deprecation markers as written. */
export interface Operation {
  operationId: string;
  method: string;
  path: string;
  deprecated: boolean;
  /** `x-sunset` in ms since the epoch; NaN when missing or not a date (redocly's deprecation rules refuse that). */
  sunsetAt: number;
}

/** `GET /pets/{petId}`. */
export const where = (op: { method: string; path: string }) => `${op.method.toUpperCase()} ${op.path}`;
/** The sunset's day, as the server's 410 names it. */
export const sunsetDate = (op: Operation) => dayOf(op.sunsetAt);
/** The sunset as the spec writes it: 2030-12-05T00:00:00Z. */
export const sunsetInstant = (op: Operation) => isoInstant(op.sunsetAt);
/** Only a deprecated operation has a sunset the server acts on (src/features/deprecation/). */
export const sunsetPassed = (op: Operation, day: ContractDay) => op.deprecated && op.sunsetAt <= day.start;
/** 00:00 UTC of the first day on which the sunset has passed (whole days since the epoch are UTC midnights). */
const firstDayPast = (op: Operation) => Math.ceil(op.sunsetAt / DAY_MS) * DAY_MS;
/** The first day on which the sunset has passed: the sunset's own day when it is at 00:00 UTC, else the next. */
export const removableFrom = (op: Operation) => dayOf(firstDayPast(op));

/** Every operation of an OpenAPI document (parsed, path items inline or dereferenced), with its deprecation markers. */
function deprecationsOf(document: unknown): Operation[] {
  return [...operationsOf(document)].map(({ operationId, method, path, operation }) => ({
    operationId: operationId ?? '(no operationId)',
    method,
    path,
    deprecated: operation.deprecated === true,
    sunsetAt: typeof operation['x-sunset'] === 'string' ? Date.parse(operation['x-sunset']) : Number.NaN,
  }));
}

/** What the gate does with the operations one comparison removes. */
export interface SunsetRemovals {
  /** Removed after their sunset: no break. */
  excused: Operation[];
  /** Deprecated with a sunset still to come: still a break, with a hint of when it will not be. */
  early: Operation[];
  /** Whether a change at this document path belongs to an excused removal (the operation, or a path item left with none). */
  excuses(path: readonly (string | number)[]): boolean;
}

/**
 * The operations of `before` (a released contract) that `after` (the working spec) no longer has,
 * split by whether their sunset, as `before` gives it, has passed on `day`. Only the sunset the
 * released contract promised counts: a working spec cannot move it earlier.
 */
export function sunsetRemovals(before: unknown, after: unknown, day: ContractDay): SunsetRemovals {
  const afterPaths = isNode(after) && isNode(after.paths) ? after.paths : {};
  const beforeOps = deprecationsOf(before);
  const kept = new Set([...operationsOf(after)].map(where));
  const removed = beforeOps.filter((op) => !kept.has(where(op)));
  const excused = removed.filter((op) => sunsetPassed(op, day));
  const early = removed.filter((op) => op.deprecated && !Number.isNaN(op.sunsetAt) && !sunsetPassed(op, day));
  const isExcused = (path: string, method: string) => excused.some((op) => op.path === path && op.method === method);
  // A path item that went with its operations takes its own fields along (summary, shared
  // parameters); they are excused only when every operation it had was.
  const pathGone = (path: string) => !isNode(afterPaths[path]) && beforeOps.some((op) => op.path === path) && beforeOps.filter((op) => op.path === path).every((op) => isExcused(op.path, op.method));
  return {
    excused,
    early,
    excuses: ([top, path, method]) => top === 'paths' && typeof path === 'string' && ((typeof method === 'string' && isExcused(path, method)) || pathGone(path)),
  };
}

/** The calendar check of one spec on one day. */
export interface CalendarReport {
  /** A sunset within WARNING_DAYS: the step still passes. */
  warnings: string[];
  /** A sunset passed with the operation still in the spec: the step fails. */
  errors: string[];
  /** One line when there is nothing to warn about, so a passing step still says what it checked. */
  summary: string;
}

/**
 * Reads `file` (YAML or JSON, path items may be $refs to other files, never URLs) and checks its
 * deprecated operations against the calendar, `name` naming it in messages.
 */
export async function checkSunsetCalendar(file: string, day: ContractDay, name = file): Promise<CalendarReport> {
  // A deprecated operation without a valid x-sunset is redocly's to refuse (deprecation-complete, deprecation-dates).
  const deprecated = deprecationsOf(await loadContract(file)).filter((op) => op.deprecated && !Number.isNaN(op.sunsetAt));
  const report: CalendarReport = { warnings: [], errors: [], summary: '' };
  for (const op of deprecated) {
    const days = (firstDayPast(op) - day.start) / DAY_MS;
    if (sunsetPassed(op, day)) {
      report.errors.push(
        `${op.operationId} (${where(op)}) reached its sunset at ${sunsetInstant(op)} and is still in ${name} on ${day.date}: remove it from the contract now; the server already answers it 410 Gone.`,
      );
    } else if (days <= WARNING_DAYS) {
      report.warnings.push(
        `warning: ${op.operationId} (${where(op)}) reaches its sunset on ${sunsetDate(op)}, ${days} day${days === 1 ? '' : 's'} after ${day.date}: the server answers it 410 Gone from then on; remove it from ${name} on ${removableFrom(op)} or later (the breaking-change gate allows it from that day).`,
      );
    }
  }
  const list = deprecated.map((op) => `${op.operationId} ${sunsetDate(op)}`).join(', ');
  report.summary =
    deprecated.length === 0
      ? `No deprecated operation in ${name}.`
      : `${deprecated.length} deprecated operation${deprecated.length === 1 ? '' : 's'} in ${name} (${list}); on ${day.date}, ${report.errors.length} past the sunset, ${report.warnings.length} within ${WARNING_DAYS} days of it.`;
  return report;
}
