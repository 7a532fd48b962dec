/**
 * Redocly plugin `animal-store`: what the server cannot serve is a lint error, never a crash at
 * start or a request that can never succeed. The server routes, parses parameters and evaluates
 * security with openapi-backend 5.21.2 (qs for the query string, bath-es5 for path parameters, raw
 * lower-cased header strings, the `cookie` package for cookies) and reads and writes JSON bodies
 * only. Each rule names the operation(s) concerned and why; redocly.yaml turns them on.
 *
 * The rules walk the document from the root rather than through Redocly's per-node visitors: a
 * component referenced by several operations is then reported once, naming all of them, and
 * callbacks and webhooks (which the server neither routes nor serves) are left alone.
 */

import { handlerName, handlerNameClashes } from './handlerNames.js';
import { challengeFor, schemeChallenge, unsupportedSchemeReason } from './securitySchemes.js';
import { fixedHeaderValue, SENDERS_OWN } from './webhookHeaders.js';
// The formats the server's Ajv checks (src/http/openapiBackend.ts adds ajv-formats' full set).
import { fullFormats } from 'ajv-formats/dist/formats.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const JSON_MEDIA_TYPE = 'application/json';
const PROBLEM_MEDIA_TYPE = 'application/problem+json';
const PROBLEM_XML_MEDIA_TYPE = 'application/problem+xml';
/** qs turns the 21st repeated `name=value` into an object with numeric keys (its arrayLimit is 20). */
const QS_ARRAY_LIMIT = 20;

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const isRef = (value) => isObject(value) && typeof value.$ref === 'string';
const code = (text) => `\`${text}\``;

/** Follows `$ref`s; `location` is where the returned node is defined. */
function deref(ctx, node, location) {
  const seen = new Set();
  while (isRef(node)) {
    if (seen.has(node.$ref)) return { node: undefined, location };
    seen.add(node.$ref);
    const resolved = ctx.resolve(node, location.source.absoluteRef);
    if (resolved.node === undefined || !resolved.location) return { node: undefined, location };
    ({ node, location } = resolved);
  }
  return { node, location };
}

/** `listPets`, or `GET /pets` for an operation without an operationId. */
function operationLabel(operation, method, path) {
  return typeof operation.operationId === 'string' ? operation.operationId : `${method.toUpperCase()} ${path}`;
}

/** Calls `visit` for every operation under `paths` (path items may be `$ref`s). */
function forEachOperation(root, ctx, visit) {
  if (!isObject(root.paths)) return;
  for (const [path, rawPathItem] of Object.entries(root.paths)) {
    const pathKeyLocation = ctx.location.child(['paths', path]);
    const { node: pathItem, location: pathItemLocation } = deref(ctx, rawPathItem, pathKeyLocation);
    if (!isObject(pathItem)) continue;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      visit({
        path,
        pathKeyLocation,
        pathItem,
        pathItemLocation,
        method,
        operation,
        location: pathItemLocation.child([method]),
        label: operationLabel(operation, method, path),
      });
    }
  }
}

/**
 * Gathers problems so that one place in the document (a shared component) is reported once, with
 * every operation that uses it: `listPets, getPet: <what is wrong>`.
 */
function collector() {
  const found = new Map();
  return {
    add(location, label, text) {
      const key = `${location.source.absoluteRef}${location.pointer}\n${text}`;
      const entry = found.get(key) ?? { location, text, labels: [] };
      if (!entry.labels.includes(label)) entry.labels.push(label);
      found.set(key, entry);
    },
    /** `format` writes the message from the operations' labels and the text (default `a, b: text`). */
    flush(report, format = (labels, text) => `${labels}: ${text}`) {
      for (const { location, text, labels } of found.values()) report({ message: format(labels.join(', '), text), location });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 1 and 2. JSON bodies only.

/** How the server reads a body of a media type (src/http/bodies/mediaType.ts says the same). */
function bodyKindOf(mediaType) {
  const type = mediaType.toLowerCase();
  if (type === JSON_MEDIA_TYPE || type.endsWith('+json')) return 'json';
  if (type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml')) return 'xml';
  if (type === 'application/x-www-form-urlencoded') return 'form';
  if (type === 'multipart/form-data') return 'multipart';
  return 'raw';
}

/** A string of bytes: `format: binary`, or a `contentMediaType` without an encoding (src/http/bodies/declared.ts). */
function isBinarySchema(schema) {
  return isObject(schema) && (schema.format === 'binary' || (schema.contentMediaType !== undefined && schema.contentEncoding === undefined));
}

const BINARY_FIX = '`type: string`, `format: binary` and a `maxLength` (its byte limit)';

/**
 * Request bodies the server reads: JSON (and every `+json` type) into its schema; a form or a
 * multipart body into an object schema's fields (file parts: binary strings); any other media
 * type as raw bytes, so its schema is a binary string. A byte limit for every binary string.
 */
function RequestBodyMediaType() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (operation.requestBody === undefined) return;
          const body = deref(ctx, operation.requestBody, location.child(['requestBody']));
          if (!isObject(body.node) || !isObject(body.node.content)) return;
          for (const [mediaType, media] of Object.entries(body.node.content)) {
            const at = body.location.child(['content', mediaType]);
            const kind = bodyKindOf(mediaType);
            const schema = isObject(media) ? deref(ctx, media.schema, at.child(['schema'])).node : undefined;
            if (kind === 'json') continue;
            if (kind === 'xml') {
              if (!isObject(schema) || (schema.type !== 'object' && schema.type !== 'array' && !isObject(schema.properties))) {
                problems.add(at.key(), label, `the request body's media type ${code(mediaType)} is read into the fields of its schema (by the schemas' \`xml\` objects): give it an object schema (\`type: object\` with \`properties\`) or an array of them.`);
              }
              continue;
            }
            if (kind === 'raw') {
              if (!isBinarySchema(schema)) {
                problems.add(at.key(), label, `the request body's media type ${code(mediaType)} is read as raw bytes: give it a schema with ${BINARY_FIX}. To have it read into fields, declare ${JSON_MEDIA_TYPE}, a form or multipart/form-data instead.`);
              } else if (typeof schema.maxLength !== 'number') {
                problems.add(at.key(), label, `the request body's media type ${code(mediaType)} has no \`maxLength\`: declare its byte limit (the server refuses a larger body with a 413; without one its own bound, 16 MiB, applies).`);
              }
              continue;
            }
            if (!isObject(schema) || (schema.type !== 'object' && !isObject(schema.properties))) {
              problems.add(at.key(), label, `the request body's media type ${code(mediaType)} is read into fields: give it an object schema (\`type: object\` with \`properties\`), one property per field${kind === 'multipart' ? ' (a file part: a binary string)' : ''}.`);
              continue;
            }
            for (const [name, raw] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
              const property = deref(ctx, raw, at.child(['schema', 'properties', name])).node;
              const item = isObject(property) && property.type === 'array' ? deref(ctx, property.items, at.child(['schema', 'properties', name, 'items'])).node : property;
              if (kind === 'form' && schemaKinds(ctx, item, at.child(['schema', 'properties', name])).has('object')) {
                problems.add(
                  at.key(),
                  label,
                  `the form field ${code(name)} is ${item === property ? 'an object' : 'an array of objects'}: a form carries flat text fields (\`name=value\`, an array field repeated), which the server cannot read into it. Declare only ${JSON_MEDIA_TYPE} for this body, give the form flat fields of its own, or take it as multipart/form-data (an object part is read as JSON).`,
                );
                continue;
              }
              if (!isBinarySchema(item)) continue;
              if (kind === 'form') problems.add(at.key(), label, `the form field ${code(name)} is a binary string: a form carries only text; send files as multipart/form-data.`);
              else if (typeof item.maxLength !== 'number') problems.add(at.key(), label, `the file part ${code(name)} has no \`maxLength\`: declare its byte limit (the server refuses a larger part with a 413).`);
            }
          }
        });
        problems.flush(ctx.report);
      },
    },
  };
}

/** Response bodies the server writes: JSON (and every `+json` type), or bytes a handler answers (a binary string). */
function ResponseMediaType() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (!isObject(operation.responses)) return;
          for (const [status, rawResponse] of Object.entries(operation.responses)) {
            const response = deref(ctx, rawResponse, location.child(['responses', status]));
            if (!isObject(response.node) || !isObject(response.node.content)) continue;
            for (const [mediaType, media] of Object.entries(response.node.content)) {
              const at = response.location.child(['content', mediaType]);
              const kind = bodyKindOf(mediaType);
              if (kind === 'json' || kind === 'xml') continue;
              const schema = isObject(media) ? deref(ctx, media.schema, at.child(['schema'])).node : undefined;
              if (kind === 'raw' && isBinarySchema(schema)) continue;
              problems.add(
                at.key(),
                label,
                kind === 'raw'
                  ? `response ${status} has media type ${code(mediaType)} with a schema that is not bytes: the server writes ${JSON_MEDIA_TYPE} (and +json) and XML (application/xml, +xml) bodies from a handler's value, or bytes a handler answers (a schema with \`type: string\` and \`format: binary\`); a response without content, such as a 204, is fine.`
                  : `response ${status} has media type ${code(mediaType)}: the server writes ${JSON_MEDIA_TYPE} (and +json) and XML bodies or bytes, never forms; a response without content, such as a 204, is fine.`,
              );
            }
          }
        });
        problems.flush(ctx.report);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 3. Parameters as openapi-backend parses them.

/**
 * What a schema can be: a set of 'array', 'object' and 'scalar' (empty when it says nothing, as
 * `{}` does). Follows `$ref`s, type lists (3.1) and allOf/oneOf/anyOf.
 */
function schemaKinds(ctx, schema, location, seen = new Set()) {
  const kinds = new Set();
  const { node, location: at } = deref(ctx, schema, location);
  if (!isObject(node) || seen.has(node)) return kinds;
  seen.add(node);
  const types = node.type === undefined ? [] : [].concat(node.type);
  for (const type of types) kinds.add(type === 'array' || type === 'object' ? type : 'scalar');
  if (types.length === 0) {
    if (node.properties !== undefined || node.additionalProperties !== undefined || node.patternProperties !== undefined) kinds.add('object');
    if (node.items !== undefined || node.prefixItems !== undefined) kinds.add('array');
  }
  for (const keyword of ['allOf', 'oneOf', 'anyOf']) {
    if (!Array.isArray(node[keyword])) continue;
    node[keyword].forEach((member, i) => {
      for (const kind of schemaKinds(ctx, member, at.child([keyword, i]), seen)) kinds.add(kind);
    });
  }
  return kinds;
}

const isStructured = (kinds) => kinds.has('array') || kinds.has('object');

/** The property schemas of an object schema, its own and those of its allOf members. */
function propertySchemas(ctx, schema, location, seen = new Set()) {
  const { node, location: at } = deref(ctx, schema, location);
  if (!isObject(node) || seen.has(node)) return [];
  seen.add(node);
  const found = [];
  if (isObject(node.properties)) {
    for (const [name, property] of Object.entries(node.properties)) found.push({ name, schema: property, location: at.child(['properties', name]) });
  }
  if (isObject(node.additionalProperties)) found.push({ name: '(additionalProperties)', schema: node.additionalProperties, location: at.child(['additionalProperties']) });
  if (Array.isArray(node.allOf)) node.allOf.forEach((member, i) => found.push(...propertySchemas(ctx, member, at.child(['allOf', i]), seen)));
  return found;
}

/** Why openapi-backend cannot deliver this (dereferenced) parameter as declared: a list of reasons. */
function parameterProblems(ctx, parameter, location) {
  const reasons = [];
  const where = parameter.in;

  if (isObject(parameter.content)) {
    for (const mediaType of Object.keys(parameter.content)) {
      if (mediaType !== JSON_MEDIA_TYPE) {
        reasons.push(`uses content ${code(mediaType)}: the server decodes only ${JSON_MEDIA_TYPE} parameter content.`);
      }
    }
    if (where !== 'query' && Object.keys(parameter.content).length > 0) {
      reasons.push(`uses content: openapi-backend decodes JSON content only in query parameters; a ${where} parameter arrives as its raw string. Declare a schema instead.`);
    }
    return reasons;
  }

  const schemaLocation = location.child(['schema']);
  const kinds = schemaKinds(ctx, parameter.schema, schemaLocation);
  const style = parameter.style;

  if (where === 'path' || where === 'header' || where === 'cookie') {
    if (isStructured(kinds)) {
      reasons.push(
        `has an ${kinds.has('array') ? 'array' : 'object'} schema: openapi-backend delivers path, header and cookie parameters as one raw string and splits only query arrays.`,
      );
    }
    const plain = where === 'cookie' ? 'form' : 'simple';
    if (style !== undefined && style !== plain) {
      reasons.push(`has style ${style}: the server reads a ${where} parameter only in the default style (${plain}), as its raw value.`);
    }
    return reasons;
  }

  if (where !== 'query') return reasons; // an unknown `in` is the struct rule's business

  if (/[[\]]/.test(String(parameter.name))) {
    reasons.push('has [ or ] in its name: qs parses such a name into a nested object, so the parameter never arrives under this name.');
  }

  const effectiveStyle = style ?? 'form';
  const QUERY_STYLES = ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'];
  if (!QUERY_STYLES.includes(effectiveStyle)) {
    reasons.push(`has style ${effectiveStyle}: the server parses query parameters only as form, spaceDelimited, pipeDelimited or deepObject.`);
    return reasons;
  }

  const { node: schema } = deref(ctx, parameter.schema, schemaLocation);

  if (effectiveStyle === 'deepObject') {
    if (!(kinds.size === 1 && kinds.has('object'))) {
      reasons.push('has style deepObject but its schema is not an object (type: object): qs builds an object from name[key]=value pairs.');
      return reasons;
    }
    for (const property of propertySchemas(ctx, parameter.schema, schemaLocation)) {
      if (isStructured(schemaKinds(ctx, property.schema, property.location))) {
        reasons.push(
          `has style deepObject with the array or object property ${code(property.name)}: OpenAPI leaves nested deepObject values undefined, and qs delivers a single value of an array as a string. Keep deepObject properties scalar.`,
        );
      }
    }
    if (parameter.explode === false) reasons.push('has style deepObject with explode: false; deepObject is defined only with explode: true.');
    return reasons;
  }

  // form, spaceDelimited, pipeDelimited
  if (kinds.has('object')) {
    reasons.push(`has an object schema with style ${effectiveStyle}: the server parses a query object only with style: deepObject (or content: ${JSON_MEDIA_TYPE}).`);
    return reasons;
  }
  if (!kinds.has('array')) {
    if (parameter.explode === false) {
      reasons.push('has explode: false but is not an array: openapi-backend splits every explode: false query value at commas into an array, so no request would validate.');
    }
    if (effectiveStyle !== 'form') reasons.push(`has style ${effectiveStyle} but is not an array: that style is defined only for arrays.`);
    return reasons;
  }

  // An array.
  if (!isObject(schema) || schema.type !== 'array') {
    reasons.push(
      "is an array only through a type list or allOf/oneOf/anyOf: openapi-backend wraps a single query value in an array only when the parameter's schema says type: array itself.",
    );
  }
  if (isObject(schema) && schema.items !== undefined && isStructured(schemaKinds(ctx, schema.items, schemaLocation.child(['items'])))) {
    reasons.push('is an array of arrays or objects: a query array carries only scalar items.');
  }
  if (effectiveStyle !== 'form' && parameter.explode !== false) {
    reasons.push(
      `has style ${effectiveStyle} without explode: false: openapi-backend splits at ${effectiveStyle === 'pipeDelimited' ? '|' : 'spaces'} only when explode: false is stated, so ${code('a|b')} would arrive as one item.`,
    );
  }
  if (effectiveStyle === 'form' && parameter.explode !== false) {
    const maxItems = isObject(schema) ? schema.maxItems : undefined;
    if (!(typeof maxItems === 'number' && maxItems <= QS_ARRAY_LIMIT)) {
      reasons.push(
        `is an exploded array (name=a&name=b) without maxItems of at most ${QS_ARRAY_LIMIT}: qs turns more than ${QS_ARRAY_LIMIT} repeated values into an object, which fails validation.`,
      );
    }
  }
  return reasons;
}

function ParameterParseable() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        const templateProblems = collector();

        forEachOperation(root, ctx, ({ path, pathKeyLocation, pathItem, pathItemLocation, operation, location, label }) => {
          // bath-es5 reads one parameter per segment reliably, and only names of [A-Za-z0-9_-].
          for (const segment of path.split('/')) {
            const expressions = segment.match(/\{[^}]*\}/g) ?? [];
            if (expressions.length > 1) {
              templateProblems.add(
                pathKeyLocation.key(),
                label,
                `the path segment ${code(segment)} holds ${expressions.length} parameters: the server's path matcher (bath-es5) cannot split one segment between parameters reliably. Give each parameter a segment of its own.`,
              );
            }
            for (const expression of expressions) {
              if (!/^\{[A-Za-z0-9_-]+\}$/.test(expression)) {
                templateProblems.add(
                  pathKeyLocation.key(),
                  label,
                  `the path parameter ${code(expression)} has a name outside [A-Za-z0-9_-]: the server's path matcher (bath-es5) does not recognise it.`,
                );
              }
            }
          }

          const declared = [];
          const collect = (list, listLocation, level) => {
            if (!Array.isArray(list)) return;
            list.forEach((raw, i) => {
              const { node, location: at } = deref(ctx, raw, listLocation.child([i]));
              if (isObject(node)) declared.push({ parameter: node, location: at, level });
            });
          };
          collect(operation.parameters, location.child(['parameters']), 'operation');
          collect(pathItem.parameters, pathItemLocation.child(['parameters']), 'path');

          for (const { parameter, location: at, level } of declared) {
            const component = at.pointer.startsWith('#/components/parameters/') ? ` (${at.pointer.slice(2)})` : '';
            const subject = `${parameter.in} parameter ${code(parameter.name)}${component}`;
            for (const reason of parameterProblems(ctx, parameter, at)) problems.add(at, label, `${subject} ${reason}`);
            if (
              level === 'operation' &&
              declared.some((other) => other.level === 'path' && other.parameter.name === parameter.name && other.parameter.in === parameter.in)
            ) {
              problems.add(
                at,
                label,
                `${subject} redefines a parameter of its path item: openapi-backend applies both definitions (the path item's schema wins), so declare it in one place only.`,
              );
            }
          }
        });
        templateProblems.flush(ctx.report);
        problems.flush(ctx.report);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 4. Security schemes the server has a handler for.

/** Operation labels per security scheme name, from the operations' effective security. */
function schemeUsers(root, ctx) {
  const users = new Map();
  forEachOperation(root, ctx, ({ operation, label }) => {
    const security = operation.security ?? root.security ?? [];
    if (!Array.isArray(security)) return;
    for (const requirement of security) {
      if (!isObject(requirement)) continue;
      for (const name of Object.keys(requirement)) {
        const list = users.get(name) ?? [];
        if (!list.includes(label)) list.push(label);
        users.set(name, list);
      }
    }
  });
  return users;
}

function SecuritySchemeSupported() {
  return {
    Root: {
      enter(root, ctx) {
        const schemes = isObject(root.components) && isObject(root.components.securitySchemes) ? root.components.securitySchemes : {};
        const users = schemeUsers(root, ctx);
        for (const [name, raw] of Object.entries(schemes)) {
          const keyLocation = ctx.location.child(['components', 'securitySchemes', name]);
          const { node: scheme } = deref(ctx, raw, keyLocation);
          const reason = unsupportedSchemeReason(scheme);
          if (reason === undefined) continue;
          const usedBy = users.get(name);
          ctx.report({
            message:
              `Security scheme ${code(name)}: ${reason}. The server refuses to start with it; it checks keys of its key store carried by ` +
              `http bearer or basic, or apiKey in a header or a cookie, and access tokens (JWT) of oauth2 and openIdConnect.` +
              (usedBy ? ` Used by ${usedBy.join(', ')}.` : ''),
            location: keyLocation.key(),
          });
        }
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 5. The responses the server sends to any operation, declared on every operation that can get them.

const ERROR_STATUS = /^[45]/;
const isErrorStatus = (status) => status === 'default' || ERROR_STATUS.test(status);
/** 1.1.0's 409, 422 and 429 (and 1.4.0's 412) carry LimitError, so 1.0.0's Error codes stay what 1.0.0 promised. */
const LIMIT_STATUSES = ['409', '412', '422', '429'];
/** The error bodies of the server's catalog (src/errors/catalog.ts): each has codes of its own. */
const ERROR_BODIES = ['Error', 'LimitError', 'GoneError', 'MediaError'];
const schemaRef = (name) => `#/components/schemas/${name}`;
const responseRef = (name) => `#/components/responses/${name}`;

/** The error body schema the server sends with `status` for `operation`: Error, LimitError, GoneError or (a 416) MediaError. */
function errorBodyFor(status, operation) {
  if (LIMIT_STATUSES.includes(status)) return 'LimitError';
  if (status === '410' && operation.deprecated === true) return 'GoneError';
  if (status === '416') return 'MediaError';
  return 'Error';
}

const isBodyRef = (schema, name) => isObject(schema) && schema.$ref === schemaRef(name) && Object.keys(schema).length === 1;

/**
 * What is wrong with an error response's body (dereferenced), or undefined when it is the right
 * one: the status's body component, or a `oneOf` of it and other error bodies of the catalog (a
 * 400 that is a validation_failed Error or an invalid_image MediaError).
 */
/** The members the server writes in Problem Details (src/http/shapes/problems.ts): RFC 9457's, then the Error's as extension members. */
const PROBLEM_MEMBERS = ['type', 'title', 'status', 'detail', 'instance', 'code', 'details'];

/** Why the server cannot fill a Problem Details schema, or undefined when it can. */
function problemSchemaProblem(schema) {
  if (!isObject(schema)) return 'no schema';
  if (schema.type !== undefined && schema.type !== 'object') return 'a schema that is not an object';
  const required = Array.isArray(schema.required) ? schema.required : [];
  const unfilled = required.filter((name) => !PROBLEM_MEMBERS.includes(name));
  if (unfilled.length > 0) return `a Problem Details schema that requires ${unfilled.map(code).join(', ')}, which the server never writes (it writes ${PROBLEM_MEMBERS.map(code).join(', ')})`;
  const declared = isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (schema.additionalProperties === false && !declared.includes('code')) return 'a Problem Details schema with `additionalProperties: false` and no `code`: the server adds the catalog\'s `code` (and a 400\'s `details`) as extension members; declare them, or allow them';
  return undefined;
}

/**
 * What is wrong with an error response's body for the server, or undefined: our `body` as
 * application/json, or RFC 9457 Problem Details (application/problem+json, application/problem+xml or both, without application/json; a schema the
 * server can fill; `resolve` follows its `$ref`).
 */
function errorBodyProblem(response, body, resolve) {
  if (!isObject(response) || !isObject(response.content) || Object.keys(response.content).length === 0) return `has no ${body} body`;
  const problemTypes = [PROBLEM_MEDIA_TYPE, PROBLEM_XML_MEDIA_TYPE].filter((type) => isObject(response.content[type]));
  if (problemTypes.length > 0 && !isObject(response.content[JSON_MEDIA_TYPE])) {
    for (const type of problemTypes) {
      const why = resolve === undefined ? 'Problem Details' : problemSchemaProblem(resolve(response.content[type].schema));
      if (why !== undefined) return `has ${why} as its ${type} body`;
    }
    return undefined;
  }
  const json = response.content[JSON_MEDIA_TYPE];
  if (!isObject(json)) return `has no ${JSON_MEDIA_TYPE} ${body} body`;
  const schema = json.schema;
  if (isBodyRef(schema, body)) return undefined;
  if (isObject(schema) && Array.isArray(schema.oneOf) && Object.keys(schema).length === 1) {
    const members = schema.oneOf;
    const known = members.every((member) => ERROR_BODIES.some((name) => isBodyRef(member, name)));
    if (known && members.some((member) => isBodyRef(member, body))) return undefined;
    return `has a \`oneOf\` as its ${JSON_MEDIA_TYPE} body that is not the ${body} component with other error bodies (${ERROR_BODIES.join(', ')})`;
  }
  const now = !isObject(schema) ? 'no schema' : isRef(schema) ? `\`$ref: '${schema.$ref}'\`` : 'a schema of its own';
  return `has ${now} as its ${JSON_MEDIA_TYPE} body, not the ${body} component`;
}

/**
 * The shared responses an operation can point at for each status: `#/components/responses/X`
 * that some operation already uses for that status and that passes the rules, most used first.
 * The fix a message suggests is then one the spec itself shows.
 */
function sharedResponses(root, ctx) {
  const counts = new Map();
  const withBody = new Map();
  const forDeprecated = new Map();
  forEachOperation(root, ctx, ({ operation, location }) => {
    if (!isObject(operation.responses)) return;
    for (const [status, raw] of Object.entries(operation.responses)) {
      if (!isRef(raw) || !raw.$ref.startsWith(responseRef(''))) continue;
      const { node } = deref(ctx, raw, location.child(['responses', status]));
      if (isErrorStatus(status) && errorBodyProblem(node, errorBodyFor(status, operation)) !== undefined) continue;
      const name = raw.$ref.slice(responseRef('').length);
      const byName = counts.get(status) ?? new Map();
      byName.set(name, (byName.get(name) ?? 0) + 1);
      counts.set(status, byName);
      if (operation.requestBody !== undefined) withBody.set(name, true);
      if (isObject(node) && isObject(node.headers) && node.headers.Deprecation !== undefined) forDeprecated.set(name, true);
    }
  });
  // A 400 for a body (BadRequest) suits an operation with one, a 400 for a query the others. A
  // response with a Deprecation header (UnauthorizedDeprecated) is a deprecated operation's: it
  // comes first for one, and is not suggested to an operation that is not deprecated.
  return (status, operation) => {
    const likeIt = (name) => status !== '400' || (withBody.get(name) === true) === (operation.requestBody !== undefined);
    const deprecatedLike = (name) => (forDeprecated.get(name) === true) === (operation.deprecated === true);
    const names = [...(counts.get(status) ?? new Map()).entries()].sort((a, b) => Number(deprecatedLike(b[0])) - Number(deprecatedLike(a[0])) || Number(likeIt(b[0])) - Number(likeIt(a[0])) || b[1] - a[1]).map(([name]) => name);
    return operation.deprecated === true || !names.some(deprecatedLike) ? names : names.filter(deprecatedLike);
  };
}

/** "`$ref: '#/components/responses/NotFound'`", with the other shared responses for the status, or undefined. */
function suggestShared(names) {
  if (names.length === 0) return undefined;
  const [first, ...others] = names;
  return `\`$ref: '${responseRef(first)}'\`${others.length > 0 ? ` (or ${others.join(', ')})` : ''}`;
}

/** Whether `operation` needs an API key: its security (or the root's) names a scheme. `security: []` or `{}` alone is public. */
function securitySchemes(root, operation) {
  const security = operation.security ?? root.security ?? [];
  return Array.isArray(security) ? [...new Set(security.filter(isObject).flatMap((requirement) => Object.keys(requirement)))] : [];
}

/**
 * A rule that every operation for which `applies` holds declares `status`, because the server
 * answers it there; the response check in test and dev refuses a status (or a body) the
 * operation does not declare. The message names the fix the spec already uses elsewhere.
 */
function operationDeclares(status, applies, why) {
  return function OperationDeclares() {
    return {
      Root: {
        enter(root, ctx) {
          const shared = sharedResponses(root, ctx);
          forEachOperation(root, ctx, ({ operation, location, label }) => {
            const reason = applies(root, operation);
            if (reason === undefined) return;
            if (isObject(operation.responses) && operation.responses[status] !== undefined) return;
            const key = status === 'default' ? 'default' : `'${status}'`;
            const suggestion = suggestShared(shared(status, operation));
            const fix = suggestion
              ? `add \`${key}:\` with ${suggestion} to its responses`
              : `add \`${key}:\` to its responses, with content ${JSON_MEDIA_TYPE} and schema \`$ref: '${schemaRef(errorBodyFor(status, operation))}'\``;
            ctx.report({
              message: `${label}${reason} declares no ${status === 'default' ? 'default' : status} response: ${fix}. ${why}`,
              location: isObject(operation.responses) ? location.child(['responses']) : location.key(),
            });
          });
        },
      },
    };
  };
}

const always = () => '';
const whenSecured = (root, operation) => {
  const schemes = securitySchemes(root, operation);
  return schemes.length === 0 ? undefined : ` requires an API key (security: ${schemes.join(', ')}) but`;
};
/** An operation whose security lists scopes (OAuth2's, or a scheme's roles): a valid credential without them is its 403. */
const whenScoped = (root, operation) => {
  const security = operation.security ?? root.security ?? [];
  const scopes = Array.isArray(security) ? [...new Set(security.filter(isObject).flatMap((requirement) => Object.values(requirement).flat().filter((scope) => typeof scope === 'string')))] : [];
  return scopes.length === 0 ? undefined : ` requires scopes (${scopes.join(', ')}) but`;
};
const whenDeprecated = (_root, operation) => (operation.deprecated === true ? ' is deprecated but' : undefined);

/** A local `$ref` (`#/components/parameters/X`) followed in the document itself, for rules that see an operation without a location. */
function localNode(root, node) {
  for (let hops = 0; isRef(node) && node.$ref.startsWith('#/') && hops < 8; hops += 1) {
    node = node.$ref
      .slice(2)
      .split('/')
      .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((at, part) => (isObject(at) ? at[part] : undefined), root);
  }
  return node;
}
const whenKeyed = (root, operation) =>
  Array.isArray(operation.parameters) &&
  operation.parameters.some((raw) => {
    const parameter = localNode(root, raw);
    return isObject(parameter) && parameter.in === 'header' && typeof parameter.name === 'string' && parameter.name.toLowerCase() === 'idempotency-key';
  })
    ? ' takes an Idempotency-Key but'
    : undefined;

const Operation403Response = operationDeclares(
  '403',
  whenScoped,
  'A valid credential without a scope the operation lists is answered 403 (insufficient_scope, with a WWW-Authenticate naming the scopes, RFC 6750 §3.1).',
);
const Operation401Response = operationDeclares('401', whenSecured, 'Every secured operation answers 401 with an Error body when the API key is missing or invalid.');
const Operation429Response = operationDeclares(
  '429',
  whenSecured,
  'Every secured operation answers 429 with a LimitError body when its API key is over the rate limit (rate limits are per key, so a public operation needs none).',
);
const Operation400Response = operationDeclares(
  '400',
  always,
  'The server answers 400 (validation_failed) to any operation: a query parameter it does not declare, a malformed parameter, a body where none is declared.',
);
const Operation500Response = operationDeclares('500', always, 'Any operation can fail unexpectedly; the server then answers 500 (internal_error) with an Error body.');
const OperationDefaultResponse = operationDeclares(
  'default',
  always,
  'The server also answers 405, 501 (a stub), 503 and what the HTTP layer refuses (408, 431) with an Error body: the default response covers them.',
);
const DeprecatedOperation410 = operationDeclares(
  '410',
  whenDeprecated,
  'A deprecated operation answers 410 with a GoneError body during an announced brownout and from its x-sunset on.',
);
/**
 * The server makes every operation that takes an Idempotency-Key exactly-once
 * (src/features/exactlyOnce/) and answers its 409 and 422: both must be declared. One problem
 * names whichever are missing, each with the shared response the spec already uses for it.
 */
function IdempotencyKeyResponses() {
  const why = {
    409: 'a 409 (idempotency_key_in_use, a LimitError) while the first request with a key is still being served',
    422: 'a 422 (idempotency_key_reused, a LimitError) when a key comes back with a different request',
  };
  return {
    Root: {
      enter(root, ctx) {
        const shared = sharedResponses(root, ctx);
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (whenKeyed(root, operation) === undefined) return;
          const missing = ['409', '422'].filter((status) => !isObject(operation.responses) || operation.responses[status] === undefined);
          if (missing.length === 0) return;
          const fixes = missing.map((status) => {
            const suggestion = suggestShared(shared(status, operation));
            return suggestion ? `\`'${status}':\` with ${suggestion}` : `\`'${status}':\` with content ${JSON_MEDIA_TYPE} and schema \`$ref: '${schemaRef('LimitError')}'\``;
          });
          ctx.report({
            message: `${label}${whenKeyed(root, operation)} declares no ${missing.join(' or ')} response: add ${fixes.join(' and ')} to its responses. The server makes it exactly-once and answers ${missing.map((status) => why[status]).join(', and ')}.`,
            location: isObject(operation.responses) ? location.child(['responses']) : location.key(),
          });
        });
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 6. Every error answer carries an application/json Error (LimitError, GoneError) body.

function ErrorResponseBody() {
  return {
    Root: {
      enter(root, ctx) {
        const shared = sharedResponses(root, ctx);
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (!isObject(operation.responses)) return;
          for (const [status, raw] of Object.entries(operation.responses)) {
            if (!isErrorStatus(status)) continue;
            const response = deref(ctx, raw, location.child(['responses', status]));
            const body = errorBodyFor(status, operation);
            const problem = errorBodyProblem(response.node, body, (schema) => deref(ctx, schema, response.location).node);
            if (problem === undefined) continue;
            const suggestion = suggestShared(shared(status, operation));
            const why =
              status === '422'
                ? "The server sends its 409, 422 and 429 as LimitError bodies (their codes are LimitErrorCode); its 422 is a reused Idempotency-Key. A request that fails validation (the Petstore's \"Validation exception\") is a 400 validation_failed here, never a 422: remove a 422 the operation never answers."
                : body === 'LimitError'
                ? 'The server sends its 409, 422 and 429 as LimitError bodies (their codes are LimitErrorCode).'
                : body === 'GoneError'
                  ? "A deprecated operation's 410 is the server's GoneError (it names the replacement and the sunset)."
                  : body === 'MediaError'
                    ? 'The server sends a 416 (a Range past the end) as a MediaError body (its codes are MediaErrorCode).'
                    : 'The server sends every 4xx, 5xx and default answer as an Error body (a 400 may be `oneOf` it and a MediaError); the response check (tests, dev) turns an answer the spec does not describe into a 500.';
            problems.add(
              response.location,
              label,
              `${status} ${problem}: declare ${suggestion ? `${suggestion}, or ` : ''}content ${JSON_MEDIA_TYPE} with schema \`$ref: '${schemaRef(body)}'\` and an example. ${why}`,
            );
          }
        });
        // `getOrderById 404 has no Error body: …`, as a person reads it.
        problems.flush(ctx.report, (labels, text) => `${labels} ${text}`);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 7. Headers the server sends itself are declared only where it sends them.

/**
 * Where the server (not a handler) sends each header. A header the spec declares `required: true`
 * on a response where the server does not send it makes every such answer a contract violation.
 */
function serverHeaderProblem(name, { root, operation, method, status, responses, bytes }) {
  const has = (response, header) => isObject(response) && isObject(response.headers) && Object.keys(response.headers).some((h) => h.toLowerCase() === header);
  switch (name.toLowerCase()) {
    case 'etag':
      // Any operation's 200 that declares it is tagged (a change's, for the next If-Match).
      if (status === '200') return undefined;
      if (method === 'get' && (status === '304' || (status === '206' && bytes)) && responses['304'] !== undefined && has(responses['200'], 'etag')) return undefined;
      return 'the server sends ETag only on a 200 that declares it, and on the 304 of a GET that declares both an ETag on its 200 and a 304 (then it answers If-None-Match itself), and on the 206 of such a GET whose 200 is bytes: declare both, or drop the ETag';
    case 'accept-ranges':
      if (method === 'get' && (status === '200' || status === '206') && bytes && responses['206'] !== undefined) return undefined;
      return 'the server sends Accept-Ranges only on the 200 and 206 of a GET whose 200 is bytes and that declares a 206 (then it answers Range itself): declare the 206, or drop Accept-Ranges';
    case 'content-range':
      if (method === 'get' && (status === '206' || status === '416') && bytes && responses['206'] !== undefined) return undefined;
      return 'the server sends Content-Range only on the 206 and 416 of a GET whose 200 is bytes and that declares a 206 (then it answers Range itself): declare the 206, or drop Content-Range';
    case 'deprecation':
    case 'sunset':
      if (operation.deprecated === true) return undefined;
      return 'the server sends it only on the answers of a deprecated operation (from deprecated, x-deprecated-at and x-sunset): drop it, or deprecate the operation';
    case 'www-authenticate':
      if (status === '401' && securitySchemes(root, operation).length > 0) return undefined;
      if (status === '403' && whenScoped(root, operation) !== undefined) return undefined;
      return 'the server sends it only on the 401 of an operation that needs an API key, and on the 403 of one that lists scopes: drop it here';
    case 'ratelimit':
    case 'ratelimit-policy':
      return 'the server sends it only when rate limits are configured (RATE_LIMIT) and the caller has a key: declare it with `required: false`';
    default:
      return undefined;
  }
}

/**
 * What a 401's WWW-Authenticate may say, when its schema lists the values (`enum`, `const`): the
 * server sends a challenge per HTTP scheme the operation accepts (./securitySchemes.js), with
 * `error="invalid_token"` once a key was sent. A value it sends that the list lacks would make
 * every such 401 a contract violation.
 */
function challengeProblem(ctx, root, operation, header) {
  const { node: schema } = deref(ctx, header.node.schema, header.location);
  if (!isObject(schema)) return undefined;
  const listed = Array.isArray(schema.enum) ? schema.enum : 'const' in schema ? [schema.const] : undefined;
  if (listed === undefined) return undefined;
  const declared = isObject(root.components) && isObject(root.components.securitySchemes) ? root.components.securitySchemes : {};
  const names = securitySchemes(root, operation);
  const challenges = names.map((name) => schemeChallenge(deref(ctx, declared[name], ctx.location.child(['components', 'securitySchemes', name])).node));
  const sent = [challengeFor(challenges, false), challengeFor(challenges, true)];
  const missing = sent.filter((value) => !listed.includes(value));
  if (missing.length === 0) return undefined;
  return `401's ${code('WWW-Authenticate')} lists its values, but the server also sends ${missing.map(code).join(' and ')} for this operation (its schemes: ${names.join(', ')}): add them to the list, or give the operation a 401 of its own that lists them`;
}

/** Whether a response's content is bytes (a binary string of each media type): what the server answers in ranges when a 206 is declared. */
function binaryAnswer(response, resolve) {
  if (!isObject(response) || !isObject(response.content)) return false;
  const media = Object.values(response.content);
  return media.length > 0 && media.every((m) => isObject(m) && isBinarySchema(resolve(m.schema)));
}

function ServerHeaders() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, method, location, label }) => {
          if (!isObject(operation.responses)) return;
          const responses = Object.fromEntries(Object.entries(operation.responses).map(([status, raw]) => [status, deref(ctx, raw, location.child(['responses', status])).node]));
          const bytes = binaryAnswer(responses['200'], (schema) => deref(ctx, schema, location).node);
          for (const [status, raw] of Object.entries(operation.responses)) {
            const response = deref(ctx, raw, location.child(['responses', status]));
            if (!isObject(response.node) || !isObject(response.node.headers)) continue;
            for (const [name, rawHeader] of Object.entries(response.node.headers)) {
              const header = deref(ctx, rawHeader, response.location.child(['headers', name]));
              if (!isObject(header.node)) continue;
              const challenge = status === '401' && name.toLowerCase() === 'www-authenticate' ? challengeProblem(ctx, root, operation, header) : undefined;
              if (challenge !== undefined) problems.add(response.location.child(['headers', name]).key(), label, challenge);
              if (header.node.required !== true) continue;
              const problem = serverHeaderProblem(name, { root, operation, method, status, responses, bytes });
              if (problem !== undefined) problems.add(response.location.child(['headers', name]).key(), label, `${status} declares the required header ${code(name)}, but ${problem}.`);
            }
          }
        });
        problems.flush(ctx.report, (labels, text) => `${labels} ${text}`);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 8. Header parameters fit in the request head the server accepts.

/** src/http/clientError.ts MAX_REQUEST_HEAD_BYTES: the request line and headers, at most 16 KiB (more is a 431). */
export const MAX_REQUEST_HEAD_BYTES = 16 * 1024;
/** Half of it for one header parameter: a browser or SDK sends kilobytes of its own (cookies, user agent). */
export const HEADER_PARAMETER_MAX_LENGTH = MAX_REQUEST_HEAD_BYTES / 2;

function HeaderParameterLength() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, pathItem, pathItemLocation, location, label }) => {
          const lists = [
            [operation.parameters, location.child(['parameters'])],
            [pathItem.parameters, pathItemLocation.child(['parameters'])],
          ];
          for (const [list, listLocation] of lists) {
            if (!Array.isArray(list)) continue;
            list.forEach((raw, i) => {
              const { node: parameter, location: at } = deref(ctx, raw, listLocation.child([i]));
              if (!isObject(parameter) || parameter.in !== 'header') return;
              const { node: schema } = deref(ctx, parameter.schema, at.child(['schema']));
              // A number, a boolean or an enumeration is short by its nature; free text needs its bound.
              const types = isObject(schema) && schema.type !== undefined ? [].concat(schema.type) : [];
              if (isObject(schema) && (schema.enum !== undefined || schema.const !== undefined || (types.length > 0 && !types.includes('string')))) return;
              const maxLength = isObject(schema) ? schema.maxLength : undefined;
              if (typeof maxLength === 'number' && maxLength <= HEADER_PARAMETER_MAX_LENGTH) return;
              problems.add(
                at,
                label,
                `header parameter ${code(parameter.name)} ${typeof maxLength === 'number' ? `has maxLength ${maxLength}` : 'has no maxLength'}: ` +
                  `declare \`maxLength: ${HEADER_PARAMETER_MAX_LENGTH}\` or less on its schema. The server accepts at most ${MAX_REQUEST_HEAD_BYTES} bytes of request line and headers (more is a 431), and a client sends kilobytes of its own.`,
              );
            });
          }
        });
        problems.flush(ctx.report);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 9. Every body has an example.

function MediaTypeExamples() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        const check = (content, contentLocation, label, what) => {
          if (!isObject(content)) return;
          for (const [mediaType, media] of Object.entries(content)) {
            if (!isObject(media) || media.example !== undefined || media.examples !== undefined) continue;
            // Bytes (an image, a file) have no example a YAML file can hold: the docs show the schema.
            if (bodyKindOf(mediaType) === 'raw' && isBinarySchema(deref(ctx, media.schema, contentLocation.child([mediaType, 'schema'])).node)) continue;
            problems.add(
              contentLocation.child([mediaType]).key(),
              label,
              `${what} (${mediaType}) has no example: add \`examples:\` with a named, realistic value (\`value:\`) that validates against its schema, or \`example:\`. The docs, the mock and the tests show and check it.`,
            );
          }
        };
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (operation.requestBody !== undefined) {
            const body = deref(ctx, operation.requestBody, location.child(['requestBody']));
            if (isObject(body.node)) check(body.node.content, body.location.child(['content']), label, 'the request body');
          }
          if (isObject(operation.responses)) {
            for (const [status, raw] of Object.entries(operation.responses)) {
              const response = deref(ctx, raw, location.child(['responses', status]));
              if (isObject(response.node)) check(response.node.content, response.location.child(['content']), label, `the ${status} response body`);
            }
          }
          for (const [list, listLocation] of [[operation.parameters, location.child(['parameters'])]]) {
            if (!Array.isArray(list)) continue;
            list.forEach((raw, i) => {
              const { node, location: at } = deref(ctx, raw, listLocation.child([i]));
              if (isObject(node) && isObject(node.content)) check(node.content, at.child(['content']), label, `${node.in} parameter ${code(node.name)}`);
            });
          }
        });
        problems.flush(ctx.report);
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 10. Summaries: a short sentence-case phrase, naming what is wrong.

const SUMMARY = /^[A-Z][a-z0-9 ,]*[a-z0-9]$/;

/** Why `summary` is not a sentence-case phrase, each reason naming the word or character. */
function summaryProblems(summary) {
  const reasons = [];
  if (!/^[A-Z]/.test(summary)) reasons.push(`it starts with ${JSON.stringify(summary.slice(0, 1))}, not a capital letter`);
  const words = summary.split(/[ ,]+/).filter((word) => word !== '');
  words.forEach((word, i) => {
    const capitals = i === 0 ? word.slice(1) : word;
    if (/[A-Z]/.test(capitals)) reasons.push(i === 0 ? `'${word}' has a capital after its first letter` : `'${word.replace(/[.]$/, '')}' is capitalised after the first word`);
  });
  if (/\.$/.test(summary)) reasons.push('it ends with a period');
  else if (/[ ,]$/.test(summary)) reasons.push(`it ends with ${JSON.stringify(summary.slice(-1))}`);
  const others = [...new Set(summary.slice(1).replace(/\.$/, '').replace(/[A-Za-z0-9 ,]/g, ''))];
  if (others.length > 0) reasons.push(`it has ${others.map((c) => `'${c}'`).join(', ')}: only letters, digits, spaces and commas`);
  return reasons;
}

function SummarySentenceCase() {
  return {
    Root: {
      enter(root, ctx) {
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          const summary = operation.summary;
          if (typeof summary !== 'string' || summary.trim() === '') {
            ctx.report({ message: `${label} has no summary: add one, a short sentence-case phrase such as 'Get an order' (the docs' menu and the handler's comment show it).`, location: location.key() });
            return;
          }
          if (SUMMARY.test(summary)) return;
          const reasons = summaryProblems(summary);
          const rewrite = `${summary.slice(0, 1).toUpperCase()}${summary.slice(1).toLowerCase()}`.replace(/[.\s,]+$/, '');
          const suggestion = SUMMARY.test(rewrite) ? ` Write '${rewrite}'.` : '';
          ctx.report({
            message: `${label} summary '${summary}': ${reasons.join('; ')}. Summaries are sentence case (a capital only at the start, so 'id', 'url'), letters, digits, spaces and commas, without a final period.${suggestion}`,
            location: location.child(['summary']),
          });
        });
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 11. Integers: a format and both bounds, within what JavaScript holds exactly.

const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 2^53 − 1
const INT32_MAX = 2 ** 31 - 1;

/** `Order.quantity`, "getInventory's 200 response body, at `additionalProperties`": where a schema is, in words. */
function describeSchemaPlace(root, pointer) {
  const tokens = pointer
    .replace(/^#\/?/, '')
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  let place;
  let rest;
  if (tokens[0] === 'components' && tokens[1] === 'schemas' && tokens.length >= 3) {
    place = undefined;
    rest = tokens.slice(2);
  } else if (tokens[0] === 'components' && tokens.length >= 3) {
    place = `\`components.${tokens[1]}.${tokens[2]}\``;
    rest = tokens.slice(3);
  } else if (tokens[0] === 'paths' && METHODS.includes(tokens[2])) {
    const operation = isObject(root.paths) && isObject(root.paths[tokens[1]]) ? root.paths[tokens[1]][tokens[2]] : undefined;
    const label = isObject(operation) ? operationLabel(operation, tokens[2], tokens[1]) : `${tokens[2].toUpperCase()} ${tokens[1]}`;
    rest = tokens.slice(3);
    if (rest[0] === 'responses' && rest[2] === 'content' && rest[4] === 'schema') {
      place = `${label}'s ${rest[1]} response body`;
      rest = rest.slice(5);
    } else if (rest[0] === 'requestBody' && rest[1] === 'content' && rest[3] === 'schema') {
      place = `${label}'s request body`;
      rest = rest.slice(4);
    } else if (rest[0] === 'parameters' && rest[2] === 'schema') {
      const parameter = Array.isArray(operation?.parameters) ? operation.parameters[Number(rest[1])] : undefined;
      place = `${label}'s parameter \`${isObject(parameter) && typeof parameter.name === 'string' ? parameter.name : rest[1]}\``;
      rest = rest.slice(3);
    } else {
      place = label;
    }
  } else {
    return `\`${pointer}\``;
  }
  // Property names joined with dots, every other step as it is spelled: `Order.items.allOf.0`.
  const steps = [];
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i];
    if ((token === 'properties' || token === 'patternProperties') && i + 1 < rest.length) steps.push(rest[++i]);
    else steps.push(token);
  }
  const path = steps.join('.');
  if (place === undefined) return `\`${path}\``;
  return path === '' ? place : `${place}, at \`${path}\`,`;
}

function IntegerBounds() {
  let root;
  return {
    Root: {
      enter(node) {
        root = node;
      },
    },
    Schema(schema, ctx) {
      if (!isObject(schema)) return;
      const types = schema.type === undefined ? [] : [].concat(schema.type);
      if (!types.includes('integer')) return;
      const format = schema.format;
      const lower = typeof schema.minimum === 'number' ? schema.minimum : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
      const upper = typeof schema.maximum === 'number' ? schema.maximum : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum : undefined;
      const reasons = [];
      const largest = format === 'int32' ? INT32_MAX : MAX_SAFE;
      if (format !== 'int32' && format !== 'int64') reasons.push(`${format === undefined ? 'no format' : `format ${format}`}: declare \`format: int32\` (a count, a quantity) or \`format: int64\` (an identifier)`);
      if (lower === undefined && upper === undefined) reasons.push(`no minimum or maximum: declare both, the smallest and largest value it may take (e.g. \`minimum: 1\`, \`maximum: ${largest}\`)`);
      else if (lower === undefined) reasons.push(`no minimum: declare the smallest value it may take (e.g. \`minimum: 0\` or \`minimum: 1\`)`);
      else if (upper === undefined) reasons.push(`no maximum: declare the largest value it may take, at most \`maximum: ${largest}\``);
      if (upper !== undefined && upper > MAX_SAFE) reasons.push(`maximum ${upper}, above 2^53 − 1: declare at most \`maximum: ${MAX_SAFE}\``);
      if (lower !== undefined && lower < -MAX_SAFE) reasons.push(`minimum ${lower}, below −(2^53 − 1): declare at least \`minimum: -${MAX_SAFE}\``);
      if (reasons.length === 0) return;
      ctx.report({
        message:
          `${describeSchemaPlace(root ?? {}, ctx.location.pointer)} is an integer with ${reasons.join('; and ')}. ` +
          'Unbounded integers fail the OWASP API4 check, and JSON.parse (in this server and in JavaScript clients) rounds integers beyond 2^53 − 1 (9007199254740991); an identifier can `$ref` a bounded schema such as `#/components/schemas/Id`.',
        location: ctx.location,
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 12. Operation ids: any the spec allows, as long as each gives its handler a name of its own
// (./handlerNames.js: `get-stations` gets a handler named getStations).

function OperationHandlerName() {
  return {
    Root: {
      enter(root, ctx) {
        const found = [];
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          const id = operation.operationId;
          if (typeof id !== 'string') return;
          if (handlerName(id) === '') {
            ctx.report({ message: `${label}: operationId ${code(id)} has no letter or digit, so no handler can be named after it: give it one (say ${code('getStation')}).`, location: location.child(['operationId']) });
            return;
          }
          found.push({ id, location: location.child(['operationId']) });
        });
        for (const { ids, name } of handlerNameClashes(found.map((entry) => entry.id))) {
          const where = found.find((entry) => entry.id === ids[1]) ?? found[0];
          ctx.report({
            message: `operationIds ${ids.map(code).join(' and ')} give their handlers one name (${code(`handlers/${name}.ts`)}, the same file on a case-insensitive file system): rename one.`,
            location: where.location,
          });
        }
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 13. Formats: any name a spec writes, the unknown ones annotations (JSON Schema 2020-12).

const CHECKED_FORMATS = new Set(Object.keys(fullFormats));

/**
 * A `format` the server's validator does not know (`iso-country-code`) is an annotation, as JSON
 * Schema 2020-12 makes it: the server starts and checks the value by its other keywords. Said
 * once per format, naming where it is used, so that nobody believes it is checked.
 */
function FormatAnnotation() {
  let root;
  const found = new Map();
  return {
    Root: {
      enter(node) {
        root = node;
        found.clear();
      },
      leave(_node, ctx) {
        for (const [format, { location, places }] of found) {
          ctx.report({
            message:
              `format ${code(format)} (${places.join('; ')}) is not one the server, the mock or the client checks: it is an annotation, as JSON Schema 2020-12 makes ` +
              `a format its validator does not know, and values are checked by their type and other keywords alone. To have it checked, say it with \`pattern\`, \`enum\` or bounds.`,
            location,
          });
        }
      },
    },
    Schema(schema, ctx) {
      if (!isObject(schema) || typeof schema.format !== 'string' || CHECKED_FORMATS.has(schema.format)) return;
      const entry = found.get(schema.format) ?? { location: ctx.location.child(['format']), places: [] };
      const place = describeSchemaPlace(root ?? {}, ctx.location.pointer);
      if (!entry.places.includes(place)) entry.places.push(place);
      found.set(schema.format, entry);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A webhook's required header the server can fill.

/**
 * The dispatcher sends a header a webhook declares only when its schema fixes the value (`const`,
 * a one-value `enum`, a `default`): a required one left open is missing from every delivery, so a
 * receiver generated from the spec refuses them all. A warning: the spec may describe a header a
 * proxy in front adds. Standard Webhooks' own headers, which the server always sends, are exempt.
 */
function WebhookHeaderValue() {
  return {
    Root: {
      leave(root, ctx) {
        if (!isObject(root.webhooks)) return;
        for (const [event, rawItem] of Object.entries(root.webhooks)) {
          const { node: pathItem, location: itemAt } = deref(ctx, rawItem, ctx.location.child(['webhooks', event]));
          if (!isObject(pathItem)) continue;
          const { node: operation, location: operationAt } = deref(ctx, pathItem.post, itemAt.child(['post']));
          const declared = [
            ...(Array.isArray(pathItem.parameters) ? pathItem.parameters.map((parameter, i) => [parameter, itemAt.child(['parameters', i])]) : []),
            ...(isObject(operation) && Array.isArray(operation.parameters) ? operation.parameters.map((parameter, i) => [parameter, operationAt.child(['parameters', i])]) : []),
          ];
          for (const [raw, rawAt] of declared) {
            const { node: parameter, location } = deref(ctx, raw, rawAt);
            if (!isObject(parameter) || parameter.in !== 'header' || parameter.required !== true || typeof parameter.name !== 'string') continue;
            if (SENDERS_OWN.has(parameter.name.toLowerCase())) continue;
            if (fixedHeaderValue(deref(ctx, parameter.schema, location.child(['schema'])).node) !== undefined) continue;
            ctx.report({
              message:
                `webhook ${code(event)} requires header ${code(parameter.name)}, but its schema fixes no value, so the server sends every delivery without it ` +
                `(it sends a declared header whose schema has \`const\`, a one-value \`enum\` or a \`default\`): fix its value so, or make it optional.`,
              location: location.child(['schema']),
            });
          }
        }
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Preprocessor: a webhook's body is what the server sends.

/**
 * `schema` (followed through `$ref`s, to a depth) as a body the server sends: a readOnly property
 * is no longer marked (it belongs), and a writeOnly one is no longer required (it is never sent).
 */
function asSent(ctx, schema, location, depth = 0) {
  if (depth > 12) return schema;
  const { node, location: at } = deref(ctx, schema, location);
  if (!isObject(node)) return node;
  const copy = { ...node };
  delete copy.readOnly;
  const properties = isObject(node.properties) ? node.properties : {};
  if (isObject(node.properties)) copy.properties = Object.fromEntries(Object.entries(node.properties).map(([name, property]) => [name, asSent(ctx, property, at, depth + 1)]));
  if (Array.isArray(node.required)) {
    copy.required = node.required.filter((name) => {
      const property = properties[name];
      return !((isObject(property) && property.writeOnly === true) || deref(ctx, property, at).node?.writeOnly === true);
    });
  }
  if (node.items !== undefined) copy.items = asSent(ctx, node.items, at, depth + 1);
  for (const key of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(node[key])) copy[key] = node[key].map((branch) => asSent(ctx, branch, at, depth + 1));
  return copy;
}

/**
 * Redocly's example rule (no-invalid-media-type-examples) judges every request body as a request:
 * a readOnly property must be absent and a required writeOnly one present. A webhook's body is
 * sent by the server, where it is the other way round (a booking's id belongs, its card number
 * never goes): so, for lint alone, a webhook body's schema is replaced by its view as sent before
 * the rule judges the examples (the spec and its bundle keep it as written).
 */
/** Whether `schema` (followed as asSent follows it) marks anything readOnly or writeOnly: a body without marks is left as written, its `$ref`s with it. */
function marksReadOrWrite(ctx, schema, location, depth = 0) {
  if (depth > 12) return false;
  // A mark may stand beside a `$ref` (3.1 allows siblings), which deref leaves behind.
  if (isObject(schema) && (schema.readOnly === true || schema.writeOnly === true)) return true;
  const { node, location: at } = deref(ctx, schema, location);
  if (!isObject(node)) return false;
  if (node.readOnly === true || node.writeOnly === true) return true;
  const children = [...(isObject(node.properties) ? Object.values(node.properties) : []), ...(node.items === undefined ? [] : [node.items])];
  for (const key of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(node[key])) children.push(...node[key]);
  return children.some((child) => marksReadOrWrite(ctx, child, at, depth + 1));
}

function WebhookBodiesAsSent() {
  return {
    WebhooksMap: {
      MediaType: {
        enter(mediaType, ctx) {
          if (isObject(mediaType) && mediaType.schema !== undefined && marksReadOrWrite(ctx, mediaType.schema, ctx.location.child(['schema']))) mediaType.schema = asSent(ctx, mediaType.schema, ctx.location.child(['schema']));
        },
      },
    },
  };
}

export default function animalStorePlugin() {
  return {
    id: 'animal-store',
    preprocessors: {
      oas3: {
        'webhook-bodies-as-sent': WebhookBodiesAsSent,
      },
    },
    rules: {
      oas3: {
        'request-body-media-type': RequestBodyMediaType,
        'response-media-type': ResponseMediaType,
        'parameter-parseable': ParameterParseable,
        'security-scheme-supported': SecuritySchemeSupported,
        'operation-401-response': Operation401Response,
        'operation-403-response': Operation403Response,
        'operation-429-response': Operation429Response,
        'operation-400-response': Operation400Response,
        'operation-500-response': Operation500Response,
        'operation-default-response': OperationDefaultResponse,
        'deprecated-operation-410': DeprecatedOperation410,
        'idempotency-key-responses': IdempotencyKeyResponses,
        'error-response-body': ErrorResponseBody,
        'server-headers': ServerHeaders,
        'header-parameter-length': HeaderParameterLength,
        'media-type-examples': MediaTypeExamples,
        'summary-sentence-case': SummarySentenceCase,
        'integer-bounds': IntegerBounds,
        'operation-handler-name': OperationHandlerName,
        'format-annotation': FormatAnnotation,
        'webhook-header-value': WebhookHeaderValue,
      },
    },
  };
}
