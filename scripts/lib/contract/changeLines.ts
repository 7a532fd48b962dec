/**
 * One change found by api-smart-diff, in the words a client reads: which operation, parameter
 * (and where it goes), request body, response status or header, and what happened to it; or what
 * changed outside the operations. The grouping of these lines by operation, and the merging of
 * the same line seen under several statuses, is ./contractChanges.ts's.
 */
import {
  actionLine,
  at,
  capital,
  code,
  day,
  isWording,
  keywordLine,
  KIND_OF,
  listed,
  movedLine,
  schemaChange,
  shown,
  valueOf,
  WORDING_LINE,
  type Described,
  type Line,
  type Path,
  type SchemaOwner,
  type Seen,
} from './changeWords.js';
import { isNode, operationsOf as operationsIn, webhooksOf, type Node } from '../operations.js';

// ---------------------------------------------------------------------------------------------
// Operations.

export interface Operation {
  key: string;
  /** Where it is declared: an operation the API serves (`paths`) or a webhook it sends (`webhooks`, `template` its name). */
  root: 'paths' | 'webhooks';
  method: string;
  template: string;
  operationId?: string;
  before?: Node;
  after?: Node;
}

export function operationsOf(before: unknown, after: unknown): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [side, document] of [['after', after], ['before', before]] as const) {
    for (const [root, walk] of [['paths', operationsIn], ['webhooks', webhooksOf]] as const) {
      for (const { path: template, method, operation, operationId } of walk(document)) {
        const key = operationKey(root, method, template);
        const entry: Operation = operations.get(key) ?? { key, root, method, template };
        entry[side] = operation;
        entry.operationId ??= operationId;
        operations.set(key, entry);
      }
    }
  }
  return operations;
}

/** The key of an operation in operationsOf's map: `get /pets`, or `webhooks post petCreated`. */
export const operationKey = (root: Operation['root'], method: string, template: string) => (root === 'paths' ? `${method} ${template}` : `${root} ${method} ${template}`);

/** `getPet (GET /pets/{petId})`; a webhook by its name: `petCreated (webhook)`. */
export const subjectOf = (op: Operation) =>
  op.root === 'webhooks' ? `${op.template} (webhook)` : `${op.operationId ? `${op.operationId} ` : ''}(${op.method.toUpperCase()} ${op.template})`.replace(/^\((.*)\)$/, '$1');

/** Who may call: `public (no API key)`, or the schemes by name. */
function securityWords(requirements: unknown): string {
  if (!Array.isArray(requirements)) return 'none declared';
  if (requirements.length === 0 || requirements.some((r) => isNode(r) && Object.keys(r).length === 0)) {
    const named = requirements.filter((r) => isNode(r) && Object.keys(r).length > 0);
    return named.length === 0 ? 'public (no API key)' : `${listed(named.map((r) => Object.keys(r as Node).map(code).join(' and ')))} or none`;
  }
  return requirements.map((r) => (isNode(r) ? Object.keys(r).map(code).join(' and ') : '?')).join(' or ');
}

/** Who may call `op`: its own security, else the document's. */
const callers = (op: Node | undefined, document: unknown) => securityWords(op && 'security' in op ? op.security : at(document, ['security']));

/** `sunset 2030-12-05, use GET /pets…`: what a deprecated operation's markers say, or nothing. */
function deprecationDetails(op: Node | undefined): string {
  const [sunset, replacement] = [day(op?.['x-sunset']), op?.['x-replacement']];
  return [sunset && `sunset ${sunset}`, typeof replacement === 'string' && replacement && `use ${replacement}`].filter(Boolean).join(', ');
}

/** The parameter a change path names: the whole value for an added or removed one, else by its index in the earlier document. */
function parameterAt(seen: Seen, listPath: Path, index: number, whole: boolean): Node | undefined {
  const value = whole ? valueOf(seen.diff) : undefined;
  if (isNode(value)) return value;
  const earlier = at(seen.before, [...listPath, index]);
  return isNode(earlier) ? earlier : (at(seen.after, [...listPath, index]) as Node | undefined);
}

const parameterWhere = (parameter: Node | undefined) => `${String(parameter?.in ?? '')} parameter ${code(String(parameter?.name ?? '?'))}`.trim();

/** A parameter added (required or optional), removed or changed as a whole. */
function parameterLine(action: Seen['diff']['action'], parameter: Node): Line {
  return action === 'add' ? { kind: 'added', text: `Added ${parameter.required === true ? 'required' : 'optional'} ${parameterWhere(parameter)}` } : actionLine(action, parameterWhere(parameter));
}

/** A change under `parameters` of an operation or a path item; `listPath` is the document path of that list. */
export function parameterChange(seen: Seen, listPath: Path): Described {
  const { diff } = seen;
  const [index, key, ...more] = diff.path.slice(listPath.length);
  if (index === undefined) {
    const list = valueOf(diff);
    return Array.isArray(list) ? list.filter(isNode).map((p) => parameterLine(diff.action === 'remove' ? 'remove' : 'add', p)) : undefined;
  }
  const parameter = parameterAt(seen, listPath, Number(index), key === undefined);
  if (!parameter) return undefined;
  if (key === undefined) return parameterLine(diff.action, parameter);
  const where = parameterWhere(parameter);
  const list = at(seen.after, listPath);
  const now = Array.isArray(list) ? list.find((p): p is Node => isNode(p) && p.name === parameter.name && p.in === parameter.in) : undefined;
  if (key === 'required') return { kind: 'changed', text: `Made ${where} ${now?.required === true ? 'required' : 'optional'}` };
  if (key === 'deprecated') return now?.deprecated === true ? { kind: 'deprecated', text: `Deprecated ${where}` } : { kind: 'changed', text: `${capital(where)} is no longer deprecated` };
  if (isWording(key) || (key === 'content' && isWording(more[1]))) return WORDING_LINE;
  const owner: SchemaOwner = { kind: 'parameter', where };
  if (key === 'schema') return schemaChange(seen, [...listPath, index, 'schema'], owner);
  if (key === 'content' && more[1] === 'schema') return schemaChange(seen, [...listPath, index, 'content', more[0]!, 'schema'], owner);
  if (more.length === 0) return keywordLine(diff.action, String(key), where, diff.before, diff.after);
  return keywordLine('replace', String(key), where, at(seen.before, [...listPath, index, key]), at(seen.after, [...listPath, index, key]));
}

function requestBodyChange(seen: Seen, bodyPath: Path): Described {
  const { diff } = seen;
  const [key, type, inner] = diff.path.slice(bodyPath.length);
  if (key === undefined) return diff.action === 'add' ? { kind: 'added', text: `Added ${at(diff.after, ['required']) === true ? 'a required' : 'an optional'} request body` } : actionLine(diff.action, 'the request body');
  if (key === 'required') return { kind: 'changed', text: `Made the request body ${at(seen.after, [...bodyPath, 'required']) === true ? 'required' : 'optional'}` };
  if (isWording(key) || (key === 'content' && isWording(inner))) return WORDING_LINE;
  if (key === 'content' && type !== undefined && inner === undefined && (diff.action === 'add' || diff.action === 'remove')) {
    return actionLine(diff.action, `media type ${code(type)} ${diff.action === 'add' ? 'to' : 'from'} the request body`);
  }
  if (key === 'content' && type !== undefined && inner === 'schema') return schemaChange(seen, [...bodyPath, 'content', type, 'schema'], { kind: 'request' });
  return keywordLine(diff.action, diff.path.slice(bodyPath.length).join('.'), 'the request body', diff.before, diff.after);
}

function responseChange(seen: Seen, responsesPath: Path): Described {
  const { diff } = seen;
  const [status, key, name, inner] = diff.path.slice(responsesPath.length).map(String);
  if (status === undefined) return keywordLine(diff.action, 'responses', 'the operation', undefined, undefined);
  if (key === undefined) return actionLine(diff.action, `response ${code(status)}`);
  if (isWording(key) || ((key === 'headers' || key === 'content') && isWording(inner))) return WORDING_LINE;
  const responsePath = [...responsesPath, status];
  const moved = diff.action === 'add' || diff.action === 'remove';
  if (key === 'headers' && name === undefined) {
    const headers = valueOf(diff);
    return isNode(headers) ? placed(Object.keys(headers).map((h) => movedLine(diff.action === 'remove' ? 'remove' : 'add', `header ${code(h)}`)), { status }) : undefined;
  }
  if (key === 'headers' && name !== undefined) {
    const header = `header ${code(name)}`;
    if (inner === undefined && moved) return placed(movedLine(diff.action, header), { status });
    if (inner === 'required') {
      const required = at(seen.after, [...responsePath, 'headers', name, 'required']) === true;
      return placed({ kind: 'changed', text: required ? `Made ${header} always present` : `Made ${header} optional (it may be absent)` }, { status });
    }
    if (inner === 'deprecated') return placed({ kind: 'deprecated', text: `Deprecated ${header}` }, { status });
    if (inner === 'schema') return placed(schemaChange(seen, [...responsePath, 'headers', name, 'schema'], { kind: 'header', name }), { status });
    return placed(keywordLine(diff.action, diff.path.slice(responsePath.length + 2).join('.'), header, diff.before, diff.after), { status });
  }
  if (key === 'content' && inner === undefined && moved) return placed(movedLine(diff.action, name !== undefined ? `media type ${code(name)}` : diff.action === 'add' ? 'a body' : 'the body'), { status });
  if (key === 'content' && name !== undefined && inner === 'schema') return placed(schemaChange(seen, [...responsePath, 'content', name, 'schema'], { kind: 'response' }), { status });
  return placed(keywordLine(diff.action, diff.path.slice(responsePath.length).join('.'), 'the response', diff.before, diff.after), { status });
}

/** Each line of `described` placed: in the response it was seen in (to be merged with the same line of other statuses), or in its area of the operation. */
export function placed(described: Described, place: Pick<Line, 'status' | 'area'>): Described {
  if (described === undefined || described === WORDING_LINE) return described;
  return Array.isArray(described) ? described.map((line) => ({ ...line, ...place })) : { ...described, ...place };
}

/** A change inside one operation (its path is `paths.<template>.<method>...`). */
export function operationChange(seen: Seen, op: Operation): Described {
  const { diff } = seen;
  const opPath = diff.path.slice(0, 3);
  const [key] = diff.path.slice(3);
  const details = deprecationDetails(op.after);
  if (key === undefined) {
    if (diff.action === 'add') {
      const summary = typeof op.after?.summary === 'string' ? `: ${op.after.summary}` : '';
      const deprecated = op.after?.deprecated === true ? ` (deprecated${details ? `: ${details}` : ''})` : '';
      return { kind: 'added', text: `Added ${op.root === 'webhooks' ? 'webhook' : 'operation'}${summary}${deprecated}` };
    }
    const sunset = day(op.before?.['x-sunset']);
    return actionLine(diff.action, `${op.root === 'webhooks' ? 'webhook' : 'operation'}${diff.action === 'remove' && sunset ? ` (sunset ${sunset})` : ''}`);
  }
  if (typeof key !== 'string') return undefined;
  if (isWording(key)) return WORDING_LINE;
  if (key === 'operationId') return { kind: 'changed', text: `Changed operationId from ${shown(diff.before) ?? '(none)'} to ${shown(diff.after) ?? '(none)'}` };
  if (key === 'deprecated') return op.after?.deprecated === true ? { kind: 'deprecated', text: details ? `Deprecated (${details})` : 'Deprecated' } : { kind: 'changed', text: 'No longer deprecated' };
  if (key === 'x-sunset' || key === 'x-replacement' || key === 'x-deprecated-at') {
    // Said by the "Deprecated (…)" line when the operation became deprecated in the same change.
    if (op.before?.deprecated !== true && op.after?.deprecated === true) return undefined;
    const what = { 'x-sunset': 'the sunset', 'x-replacement': 'the replacement', 'x-deprecated-at': 'the deprecation date' }[key];
    const [was, is] = key === 'x-replacement' ? [shown(diff.before), shown(diff.after)] : [day(diff.before), day(diff.after)];
    if (diff.action === 'add') return { kind: 'changed', text: `Set ${what} to ${is ?? 'a new value'}` };
    if (diff.action === 'remove') return { kind: 'changed', text: `Removed ${what} (was ${was ?? 'set'})` };
    return { kind: 'changed', text: `Changed ${what} from ${was ?? '…'} to ${is ?? '…'}` };
  }
  if (key === 'security') {
    const [was, is] = [callers(op.before, seen.before), callers(op.after, seen.after)];
    return was === is ? undefined : { kind: 'changed', text: `Changed who may call it from ${was} to ${is}` };
  }
  if (key === 'parameters') return placed(parameterChange(seen, [...opPath, 'parameters']), { area: 1 });
  if (key === 'requestBody') return placed(requestBodyChange(seen, [...opPath, 'requestBody']), { area: 2 });
  if (key === 'responses') return placed(responseChange(seen, [...opPath, 'responses']), { area: 3 });
  return keywordLine(diff.action, diff.path.slice(3).join('.'), 'the operation', diff.before, diff.after);
}

// ---------------------------------------------------------------------------------------------
// Outside the operations.

export function wholeContractChange(seen: Seen): Described {
  const { diff } = seen;
  const [top, second, third] = diff.path.map(String);
  const dotted = diff.path.join('.');
  if (top === 'info') {
    if (second === 'version') return undefined; // the release names its version itself
    if (second === undefined || isWording(second) || second === 'termsOfService') return WORDING_LINE;
    return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
  }
  if (top === 'tags' || top === 'externalDocs') return WORDING_LINE;
  if (top === 'servers') {
    const serverWords = (server: unknown) => (isNode(server) && typeof server.url === 'string' ? `server ${code(server.url)}` : 'a server');
    const value = valueOf(diff);
    if (second === undefined && Array.isArray(value)) return value.map((s) => ({ ...actionLine(diff.action === 'remove' ? 'remove' : 'add', serverWords(s)), kind: KIND_OF[diff.action] }));
    if (second !== undefined && third === undefined && (diff.action === 'add' || diff.action === 'remove')) return actionLine(diff.action, serverWords(value));
    if (third === 'url') return { kind: 'changed', text: `Changed server URL from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
    if (isWording(third)) return WORDING_LINE;
    const server = at(seen.before, ['servers', Number(second)]) ?? at(seen.after, ['servers', Number(second)]);
    return keywordLine(diff.action, diff.path.slice(2).join('.'), serverWords(server), diff.before, diff.after);
  }
  if (top === 'security') {
    const [was, is] = [securityWords(at(seen.before, ['security'])), securityWords(at(seen.after, ['security']))];
    return was === is ? undefined : { kind: 'changed', text: `Changed the default security (operations without their own) from ${was} to ${is}` };
  }
  if (top === 'components' && second === 'securitySchemes' && third !== undefined) {
    const rest = diff.path.slice(3).map(String);
    const scheme = `security scheme ${code(third)}`;
    const value = valueOf(diff);
    const how = isNode(value) ? [value.type, value.scheme, value.in, value.name].filter((v) => typeof v === 'string').join(' ') : '';
    if (rest.length === 0 && diff.action === 'add') return { kind: 'added', text: `Added ${scheme}${how ? ` (${how})` : ''}` };
    if (rest.length === 0 && diff.action === 'remove') return { kind: 'removed', text: `Removed ${scheme}` };
    if (isWording(rest[0])) return WORDING_LINE;
    return keywordLine(diff.action, rest.join('.'), scheme, diff.before, diff.after);
  }
  if (top === 'openapi') return { kind: 'changed', text: `Changed the OpenAPI version from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
  return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
}
