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

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const JSON_MEDIA_TYPE = 'application/json';
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
    flush(report) {
      for (const { location, text, labels } of found.values()) report({ message: `${labels.join(', ')}: ${text}`, location });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 1 and 2. JSON bodies only.

function RequestBodyJson() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (operation.requestBody === undefined) return;
          const body = deref(ctx, operation.requestBody, location.child(['requestBody']));
          if (!isObject(body.node) || !isObject(body.node.content)) return;
          for (const mediaType of Object.keys(body.node.content)) {
            if (mediaType === JSON_MEDIA_TYPE) continue;
            problems.add(
              body.location.child(['content', mediaType]).key(),
              label,
              `the request body's media type ${code(mediaType)} is not ${JSON_MEDIA_TYPE}: the server reads only JSON bodies (anything else gets a 415).`,
            );
          }
        });
        problems.flush(ctx.report);
      },
    },
  };
}

function ResponseJson() {
  return {
    Root: {
      enter(root, ctx) {
        const problems = collector();
        forEachOperation(root, ctx, ({ operation, location, label }) => {
          if (!isObject(operation.responses)) return;
          for (const [status, rawResponse] of Object.entries(operation.responses)) {
            const response = deref(ctx, rawResponse, location.child(['responses', status]));
            if (!isObject(response.node) || !isObject(response.node.content)) continue;
            for (const mediaType of Object.keys(response.node.content)) {
              if (mediaType === JSON_MEDIA_TYPE) continue;
              problems.add(
                response.location.child(['content', mediaType]).key(),
                label,
                `response ${status} has media type ${code(mediaType)}: the server writes only ${JSON_MEDIA_TYPE} bodies (a response without content, such as a 204, is fine).`,
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

function describeScheme(scheme) {
  if (!isObject(scheme)) return 'not an object';
  if (scheme.type === 'http') return `http ${scheme.scheme ?? '(no scheme)'}`;
  if (scheme.type === 'apiKey') return `apiKey in ${scheme.in ?? '(nowhere)'}`;
  return String(scheme.type);
}

function isSupportedScheme(scheme) {
  if (!isObject(scheme)) return false;
  if (scheme.type === 'http') return typeof scheme.scheme === 'string' && scheme.scheme.toLowerCase() === 'bearer';
  if (scheme.type === 'apiKey') return scheme.in === 'header' && typeof scheme.name === 'string' && scheme.name.length > 0;
  return false;
}

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
          if (isSupportedScheme(scheme)) continue;
          const usedBy = users.get(name);
          ctx.report({
            message:
              `Security scheme ${code(name)} (${describeScheme(scheme)}) has no handler in the server, which refuses to start with it: ` +
              `only http bearer and apiKey in a header (with a name) are supported, both checked against the API key store.` +
              (usedBy ? ` Used by ${usedBy.join(', ')}.` : ''),
            location: keyLocation.key(),
          });
        }
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// 5. A 401 and a 429 on every operation that needs an API key.

/**
 * A rule that every operation needing an API key declares `status`: the server answers it for
 * any such operation (401: no valid key; 429: over the key's rate limit), and the response
 * check in test and dev refuses a status the operation does not declare.
 */
function securedOperationDeclares(status, why) {
  return function SecuredOperationResponse() {
    return {
      Root: {
        enter(root, ctx) {
          forEachOperation(root, ctx, ({ operation, location, label }) => {
            const security = operation.security ?? root.security ?? [];
            // `security: []` (or only `{}`, anonymous access) is public: no key, so neither a 401 nor a per-key rate limit.
            const schemes = Array.isArray(security) ? security.filter(isObject).flatMap((requirement) => Object.keys(requirement)) : [];
            if (schemes.length === 0) return;
            if (isObject(operation.responses) && operation.responses[status] !== undefined) return;
            ctx.report({
              message: `${label} requires an API key (security: ${[...new Set(schemes)].join(', ')}) but declares no ${status} response: ${why}`,
              location: isObject(operation.responses) ? location.child(['responses']) : location.key(),
            });
          });
        },
      },
    };
  };
}

const Operation401Response = securedOperationDeclares('401', 'every secured operation answers 401 with an Error body when the API key is missing or invalid.');
const Operation429Response = securedOperationDeclares(
  '429',
  "every secured operation answers 429 with a LimitError body when its API key is over the rate limit (add `'429': $ref: '#/components/responses/TooManyRequests'`).",
);

export default function animalStorePlugin() {
  return {
    id: 'animal-store',
    rules: {
      oas3: {
        'request-body-json': RequestBodyJson,
        'response-json': ResponseJson,
        'parameter-parseable': ParameterParseable,
        'security-scheme-supported': SecuritySchemeSupported,
        'operation-401-response': Operation401Response,
        'operation-429-response': Operation429Response,
      },
    },
  };
}
