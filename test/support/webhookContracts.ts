/**
 * Released contract 1.4.0 (its webhooks petCreated, petUpdated, petDeleted) and edits of its
 * webhooks, written as JSON files: what the breaking-change gate (test/tools/breaking.test.ts) and
 * the changelog (test/tools/release.test.ts) must each say of a webhook's change. Each edit checks
 * what it changes first, so a different 1.4.0 cannot make a case test nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './projectCopy.js';

type Node = Record<string, unknown>;
const node = (value: unknown, where: string): Node => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`spec/released/1.4.0.json: no object at ${where}`);
  return value as Node;
};
const at = (doc: Node, ...keys: string[]): Node => keys.reduce((current, key, i) => node(current[key], keys.slice(0, i + 1).join('.')), doc);

export const RELEASED = join(projectRoot, 'spec', 'released', '1.4.0.json');

/** The edits, by what they do. */
export const WEBHOOK_EDITS = {
  /** petCreated is gone: its receivers hear of no new animal again. */
  removeWebhook: (doc: Node) => {
    const webhooks = at(doc, 'webhooks');
    if (!('petCreated' in webhooks)) throw new Error('1.4.0 has no webhook petCreated');
    delete webhooks.petCreated;
  },
  /** petUpdated's `data.changed` is no longer always sent. */
  dropRequiredField: (doc: Node) => {
    const data = at(doc, 'components', 'schemas', 'PetUpdatedEvent', 'properties', 'data');
    const required = data.required as string[];
    if (!required.includes('changed')) throw new Error('1.4.0: PetUpdatedEvent.data does not require changed');
    data.required = required.filter((name) => name !== 'changed');
  },
  /** A field's name may now be `photo`, a value receivers never saw. */
  widenEnum: (doc: Node) => {
    const field = at(doc, 'components', 'schemas', 'PetField');
    (field.enum as string[]).push('photo');
  },
  /** `webhook-id` may be absent: receivers dedupe by it. */
  headerOptional: (doc: Node) => {
    const parameter = at(doc, 'components', 'parameters', 'WebhookId');
    if (parameter.required !== true) throw new Error('1.4.0: WebhookId is not required');
    parameter.required = false;
  },
  /** A webhook made up for the test: added, it breaks nobody. */
  addWebhook: (doc: Node) => {
    const webhooks = at(doc, 'webhooks');
    webhooks.petAdoptedExample = structuredClone(webhooks.petCreated);
    at(webhooks, 'petAdoptedExample', 'post').summary = 'An animal was adopted';
  },
  /** petCreated's body gains an optional field: receivers ignore what they do not know. */
  addOptionalField: (doc: Node) => {
    at(doc, 'components', 'schemas', 'PetCreatedEvent', 'properties').sourceExample = { type: 'string', maxLength: 20 };
  },
} satisfies Record<string, (doc: Node) => void>;

/** Released 1.4.0 with `edits` applied, written to `file`; the file's path. */
export function editedContract(file: string, ...edits: Array<(doc: Node) => void>): string {
  const doc = JSON.parse(readFileSync(RELEASED, 'utf8')) as Node;
  for (const edit of edits) edit(doc);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}
