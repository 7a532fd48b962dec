/**
 * The outbox of the spec's webhooks, reached by handlers as `deps.webhooks`: `emit` writes an event
 * in the caller's unit of work, so it is stored exactly when the change it tells of commits (a
 * rolled-back change leaves none; an exactly-once replay runs no handler, so emits nothing again).
 * The webhooks feature (src/features/webhooks/) delivers what is stored.
 */
import { randomFillSync } from 'node:crypto';
import type { Generated } from 'kysely';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { WebhookBody, WebhookName } from '../../domain/events.js';
import { newAjv } from '../../shared/ajv.js';
import { prepare } from '../queries/prepared.js';
import { afterCommit, insideUnit } from '../queries/unitOfWork.js';
import type { ResourceContext } from '../resource.js';

/** The table of src/store/migrations/0009_webhook_events.ts, as Kysely sees it. */
export type Tables = {
  webhook_events: {
    seq: Generated<number>;
    id: string;
    name: string;
    body: string;
    created_at: number;
    fanned_out: Generated<number>;
  };
};

export interface WebhookOutbox {
  /**
   * Stores event `name` with `body` (checked against the body the spec declares: a mismatch is a
   * wiring bug, thrown, never delivered) in the caller's unit of work; resolves with the event's
   * id, the `webhook-id` every delivery of it carries. Outside a unit it throws: the event must
   * commit with the change, so wrap both in `deps.unitOfWork` (or pass the emit to `pets.create`).
   */
  emit<N extends WebhookName>(name: N, body: WebhookBody<N>): Promise<string>;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Random bytes drawn from a pool filled 4 KiB at a time: one call to the system's source per 256 ids, not one per id. */
const pool = Buffer.alloc(4096);
let drawn = pool.length;
function randomBytes16(): Buffer {
  if (drawn + 16 > pool.length) {
    randomFillSync(pool);
    drawn = 0;
  }
  drawn += 16;
  return pool.subarray(drawn - 16, drawn);
}

/** `msg_` and a ULID: 48 bits of time, then 80 random bits, in Crockford's base 32, so ids sort by creation. */
export function newEventId(now = Date.now()): string {
  let time = '';
  for (let rest = now, i = 0; i < 10; i++, rest = Math.floor(rest / 32)) time = CROCKFORD[rest % 32] + time;
  let random = '';
  for (const byte of randomBytes16()) random += CROCKFORD[byte % 32];
  return `msg_${time}${random}`;
}

/** A check per webhook of the spec, of the JSON body its `post` declares, compiled on first use. */
function bodyChecks(document: ResourceContext['document']): (name: string) => ValidateFunction {
  const ajv = newAjv();
  ajv.addSchema(document as object, 'contract');
  const compiled = new Map<string, ValidateFunction>();
  return (name) => {
    let check = compiled.get(name);
    if (check === undefined) {
      const pointer = `contract#/webhooks/${name.replaceAll('~', '~0').replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
      check = ajv.compile({ $ref: pointer });
      compiled.set(name, check);
    }
    return check;
  };
}

export function open({ db: core, document, onEvents }: ResourceContext): WebhookOutbox {
  const db = core.withTables<Tables>();
  const insert = prepare<{ id: string; name: string; body: string; createdAt: number }, never>(db, (bind) =>
    db.insertInto('webhook_events').values({ id: bind('id'), name: bind('name'), body: bind('body'), created_at: bind('createdAt') }),
  );
  const checkOf = bodyChecks(document);
  const declared = new Set(Object.keys((document as { webhooks?: object }).webhooks ?? {}));
  return {
    async emit(name, body) {
      if (!declared.has(name)) throw new Error(`webhooks.emit: the spec declares no webhook ${name}`);
      if (!insideUnit()) throw new Error(`webhooks.emit(${name}) outside a unit of work: the event would not commit with the change; wrap both in deps.unitOfWork`);
      const check = checkOf(name);
      if (!check(body)) throw new Error(`webhooks.emit(${name}): the body is not the spec's: ${JSON.stringify(check.errors?.slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`))}`);
      const now = Date.now();
      const id = newEventId(now);
      await insert({ id, name, body: JSON.stringify(body), createdAt: now });
      if (onEvents) afterCommit(onEvents);
      return id;
    },
  };
}
