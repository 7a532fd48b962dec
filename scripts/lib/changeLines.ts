/**
 * One change found by api-smart-diff, in the words a client reads: which operation, parameter
 * (and where it goes), request body, response status or header, and what happened to it; or what
 * changed outside the operations. The grouping of these lines by operation, and the merging of
 * the same line seen under several statuses, is ./contractChanges.ts's.
 */
import {
  at,
  capital,
  code,
  day,
  isNode,
  keywordLine,
  KIND_OF,
  listed,
  METHODS,
  schemaChange,
  shown,
  WORDING,
  WORDING_LINE,
  type Described,
  type Line,
  type Node,
  type Path,
  type SchemaOwner,
  type Seen,
} from './changeWords.js';

// ---------------------------------------------------------------------------------------------
// Operations.

export interface Operation {
  key: string;
  method: string;
  template: string;
  operationId?: string;
  before?: Node;
  after?: Node;
  /** The path item's own parameters, which apply to the operation too. */
  itemParameters: { before: unknown; after: unknown };
}

export function operationsOf(before: unknown, after: unknown): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [side, document] of [['after', after], ['before', before]] as const) {
    const paths = at(document, ['paths']);
    if (!isNode(paths)) continue;
    for (const [template, item] of Object.entries(paths)) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const op = item[method];
        if (!isNode(op)) continue;
        const key = `${method} ${template}`;
        const entry = operations.get(key) ?? { key, method, template, itemParameters: { before: undefined, after: undefined } };
        entry[side] = op;
        entry.itemParameters[side] = item.parameters;
        if (typeof op.operationId === 'string') entry.operationId ??= op.operationId;
        operations.set(key, entry);
      }
    }
  }
  return operations;
}

export const subjectOf = (op: Operation) => `${op.operationId ? `${op.operationId} ` : ''}(${op.method.toUpperCase()} ${op.template})`.replace(/^\((.*)\)$/, '$1');

/** Who may call: `public (no API key)`, or the schemes by name. */
function securityWords(requirements: unknown): string {
  if (!Array.isArray(requirements)) return 'none declared';
  if (requirements.length === 0 || requirements.some((r) => isNode(r) && Object.keys(r).length === 0)) {
    const named = requirements.filter((r) => isNode(r) && Object.keys(r).length > 0);
    return named.length === 0 ? 'public (no API key)' : `${listed(named.map((r) => Object.keys(r as Node).map(code).join(' and ')))} or none`;
  }
  return requirements.map((r) => (isNode(r) ? Object.keys(r).map(code).join(' and ') : '?')).join(' or ');
}

function effectiveSecurity(op: Node | undefined, document: unknown): unknown {
  return op && 'security' in op ? op.security : at(document, ['security']);
}

/** `sunset 2030-12-05, use GET /pets…`: what a deprecated operation's markers say, or nothing. */
function deprecationDetails(op: Node | undefined): string {
  const sunset = day(op?.['x-sunset']);
  const replacement = typeof op?.['x-replacement'] === 'string' ? op['x-replacement'] : undefined;
  return [sunset ? `sunset ${sunset}` : undefined, replacement ? `use ${replacement}` : undefined].filter(Boolean).join(', ');
}

function deprecationText(op: Node | undefined): string {
  const details = deprecationDetails(op);
  return details ? `Deprecated (${details})` : 'Deprecated';
}

/** The parameter a change path names: the whole value for an added or removed one, else by its index in the earlier document. */
function parameterAt(seen: Seen, listPath: Path, index: number, whole: boolean): Node | undefined {
  if (whole) {
    const value: unknown = seen.diff.action === 'remove' ? seen.diff.before : seen.diff.after;
    if (isNode(value)) return value;
  }
  const earlier = at(seen.before, [...listPath, index]);
  return isNode(earlier) ? earlier : (at(seen.after, [...listPath, index]) as Node | undefined);
}

const parameterWhere = (parameter: Node | undefined) => `${String(parameter?.in ?? '')} parameter ${code(String(parameter?.name ?? '?'))}`.trim();

function addedParameter(parameter: Node): Line {
  return { kind: 'added', text: `Added ${parameter.required === true ? 'required' : 'optional'} ${parameterWhere(parameter)}` };
}

/** A change under `parameters` of an operation or a path item; `listPath` is the document path of that list. */
export function parameterChange(seen: Seen, listPath: Path): Described {
  const { diff } = seen;
  const rest = diff.path.slice(listPath.length);
  if (rest.length === 0) {
    const list: unknown = diff.action === 'remove' ? diff.before : diff.after;
    if (!Array.isArray(list)) return undefined;
    return list.filter(isNode).map((p) => (diff.action === 'remove' ? { kind: 'removed', text: `Removed ${parameterWhere(p)}` } : addedParameter(p)));
  }
  const [index, key, ...more] = rest;
  const parameter = parameterAt(seen, listPath, Number(index), key === undefined);
  if (!parameter) return undefined;
  const where = parameterWhere(parameter);
  if (key === undefined) {
    if (diff.action === 'add') return addedParameter(parameter);
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${where}` };
    return { kind: 'changed', text: `Changed ${where}` };
  }
  const now = findParameter(at(seen.after, listPath), parameter);
  if (key === 'required') return { kind: 'changed', text: now?.required === true ? `Made ${where} required` : `Made ${where} optional` };
  if (key === 'deprecated') return now?.deprecated === true ? { kind: 'deprecated', text: `Deprecated ${where}` } : { kind: 'changed', text: `${capital(where)} is no longer deprecated` };
  if (typeof key === 'string' && WORDING.has(key)) return WORDING_LINE;
  const owner: SchemaOwner = { kind: 'parameter', where };
  if (key === 'schema') return schemaChange(seen, [...listPath, index!, 'schema'], owner);
  if (key === 'content' && more.length >= 2 && more[1] === 'schema') return schemaChange(seen, [...listPath, index!, 'content', more[0]!, 'schema'], owner);
  if (key === 'content' && more.length >= 2 && typeof more[1] === 'string' && WORDING.has(more[1])) return WORDING_LINE;
  if (more.length === 0) return keywordLine(diff.action, String(key), where, diff.before, diff.after);
  return keywordLine('replace', String(key), where, at(seen.before, [...listPath, index!, key]), at(seen.after, [...listPath, index!, key]));
}

function findParameter(list: unknown, like: Node): Node | undefined {
  return Array.isArray(list) ? list.find((p): p is Node => isNode(p) && p.name === like.name && p.in === like.in) : undefined;
}

function requestBodyChange(seen: Seen, bodyPath: Path): Described {
  const { diff } = seen;
  const [key, type, inner] = diff.path.slice(bodyPath.length);
  if (key === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added ${at(diff.after, ['required']) === true ? 'a required' : 'an optional'} request body` };
    if (diff.action === 'remove') return { kind: 'removed', text: 'Removed the request body' };
    return { kind: 'changed', text: 'Changed the request body' };
  }
  if (key === 'required') return { kind: 'changed', text: at(seen.after, [...bodyPath, 'required']) === true ? 'Made the request body required' : 'Made the request body optional' };
  if (typeof key === 'string' && WORDING.has(key)) return WORDING_LINE;
  if (key === 'content' && type !== undefined && inner === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added media type ${code(type)} to the request body` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed media type ${code(type)} from the request body` };
  }
  if (key === 'content' && type !== undefined && inner === 'schema') return schemaChange(seen, [...bodyPath, 'content', type, 'schema'], { kind: 'request' });
  if (key === 'content' && typeof inner === 'string' && WORDING.has(inner)) return WORDING_LINE;
  return keywordLine(diff.action, diff.path.slice(bodyPath.length).join('.'), 'the request body', diff.before, diff.after);
}

/** Lines seen inside the response `status`, to be merged with the same line of other statuses. */
function inResponse(described: Described, status: string): Described {
  const place = (line: Line): Line => ({ ...line, status });
  if (described === undefined || described === WORDING_LINE) return described;
  return Array.isArray(described) ? described.map(place) : place(described);
}

function responseChange(seen: Seen, responsesPath: Path): Described {
  const { diff } = seen;
  const [status, key, name, inner] = diff.path.slice(responsesPath.length).map(String);
  if (status === undefined) return keywordLine(diff.action, 'responses', 'the operation', undefined, undefined);
  if (key === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added response ${code(status)}` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed response ${code(status)}` };
    return { kind: 'changed', text: `Changed response ${code(status)}` };
  }
  if (WORDING.has(key)) return WORDING_LINE;
  const responsePath = [...responsesPath, status];
  if (key === 'headers') {
    if (name === undefined) {
      const headers: unknown = diff.action === 'remove' ? diff.before : diff.after;
      if (!isNode(headers)) return undefined;
      return inResponse(
        Object.keys(headers).map((h): Line => (diff.action === 'remove' ? { kind: 'removed', text: `Removed header ${code(h)}`, preposition: 'from' } : { kind: 'added', text: `Added header ${code(h)}`, preposition: 'to' })),
        status,
      );
    }
    if (inner === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: `Added header ${code(name)}`, preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: `Removed header ${code(name)}`, preposition: 'from' }, status);
    }
    if (inner === 'required') {
      const required = at(seen.after, [...responsePath, 'headers', name, 'required']) === true;
      return inResponse({ kind: 'changed', text: required ? `Made header ${code(name)} always present` : `Made header ${code(name)} optional (it may be absent)` }, status);
    }
    if (inner === 'deprecated') return inResponse({ kind: 'deprecated', text: `Deprecated header ${code(name)}` }, status);
    if (inner !== undefined && WORDING.has(inner)) return WORDING_LINE;
    if (inner === 'schema') return inResponse(schemaChange(seen, [...responsePath, 'headers', name, 'schema'], { kind: 'header', name }), status);
    return inResponse(keywordLine(diff.action, diff.path.slice(responsePath.length + 2).join('.'), `header ${code(name)}`, diff.before, diff.after), status);
  }
  if (key === 'content') {
    if (name === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: 'Added a body', preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: 'Removed the body', preposition: 'from' }, status);
    } else if (inner === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: `Added media type ${code(name)}`, preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: `Removed media type ${code(name)}`, preposition: 'from' }, status);
    } else if (inner === 'schema') {
      return inResponse(schemaChange(seen, [...responsePath, 'content', name, 'schema'], { kind: 'response' }), status);
    } else if (WORDING.has(inner)) {
      return WORDING_LINE;
    }
  }
  return inResponse(keywordLine(diff.action, diff.path.slice(responsePath.length).join('.'), 'the response', diff.before, diff.after), status);
}

export function inArea(described: Described, area: number): Described {
  if (described === undefined || described === WORDING_LINE) return described;
  return Array.isArray(described) ? described.map((line) => ({ ...line, area })) : { ...described, area };
}

/** A change inside one operation (its path is `paths.<template>.<method>...`). */
export function operationChange(seen: Seen, op: Operation): Described {
  const { diff } = seen;
  const opPath = diff.path.slice(0, 3);
  const [key] = diff.path.slice(3);
  if (key === undefined) {
    if (diff.action === 'add') {
      const summary = typeof op.after?.summary === 'string' ? `: ${op.after.summary}` : '';
      const details = deprecationDetails(op.after);
      const deprecated = op.after?.deprecated === true ? ` (deprecated${details ? `: ${details}` : ''})` : '';
      return { kind: 'added', text: `Added operation${summary}${deprecated}` };
    }
    if (diff.action === 'remove') {
      const sunset = day(op.before?.['x-sunset']);
      return { kind: 'removed', text: `Removed operation${sunset ? ` (sunset ${sunset})` : ''}` };
    }
    return { kind: 'changed', text: 'Changed operation' };
  }
  if (typeof key !== 'string') return undefined;
  if (WORDING.has(key)) return WORDING_LINE;
  if (key === 'operationId') return { kind: 'changed', text: `Changed operationId from ${shown(diff.before) ?? '(none)'} to ${shown(diff.after) ?? '(none)'}` };
  if (key === 'deprecated') return op.after?.deprecated === true ? { kind: 'deprecated', text: deprecationText(op.after) } : { kind: 'changed', text: 'No longer deprecated' };
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
    const [was, is] = [securityWords(effectiveSecurity(op.before, seen.before)), securityWords(effectiveSecurity(op.after, seen.after))];
    return was === is ? undefined : { kind: 'changed', text: `Changed who may call it from ${was} to ${is}` };
  }
  if (key === 'parameters') return inArea(parameterChange(seen, [...opPath, 'parameters']), 1);
  if (key === 'requestBody') return inArea(requestBodyChange(seen, [...opPath, 'requestBody']), 2);
  if (key === 'responses') return inArea(responseChange(seen, [...opPath, 'responses']), 3);
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
    if (second === undefined || WORDING.has(second) || second === 'termsOfService') return WORDING_LINE;
    return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
  }
  if (top === 'tags' || top === 'externalDocs') return WORDING_LINE;
  if (top === 'servers') {
    const serverWords = (server: unknown) => (isNode(server) && typeof server.url === 'string' ? `server ${code(server.url)}` : 'a server');
    if (second === undefined) {
      const list: unknown = diff.action === 'remove' ? diff.before : diff.after;
      if (Array.isArray(list)) return list.map((s) => ({ kind: KIND_OF[diff.action], text: `${diff.action === 'remove' ? 'Removed' : 'Added'} ${serverWords(s)}` }));
    } else if (third === undefined) {
      if (diff.action === 'add') return { kind: 'added', text: `Added ${serverWords(diff.after)}` };
      if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${serverWords(diff.before)}` };
    } else if (third === 'url') {
      return { kind: 'changed', text: `Changed server URL from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
    } else if (WORDING.has(third)) {
      return WORDING_LINE;
    }
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
    if (rest.length === 0) {
      const value: unknown = diff.action === 'remove' ? diff.before : diff.after;
      const how = isNode(value) ? [value.type, value.scheme, value.in, value.name].filter((v) => typeof v === 'string').join(' ') : '';
      if (diff.action === 'add') return { kind: 'added', text: `Added ${scheme}${how ? ` (${how})` : ''}` };
      if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${scheme}` };
    }
    if (rest[0] !== undefined && WORDING.has(rest[0])) return WORDING_LINE;
    return keywordLine(diff.action, rest.join('.'), scheme, diff.before, diff.after);
  }
  if (top === 'openapi') return { kind: 'changed', text: `Changed the OpenAPI version from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
  return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
}
