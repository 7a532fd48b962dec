import {
  allNonBreaking,
  breaking,
  emptySecurity,
  isResponseSchema,
  jsonSchemaKeyChange,
  nonBreaking,
  openApiSchemaRules,
  openapi3Rules,
  reverseClassifyRuleTransformer,
  transformComapreRules,
  transformPathItems,
  type ClassifyRule,
  type ComapreContext,
  type CompareRules,
  type DiffType,
} from 'api-smart-diff';
import { comparePatterns } from './patternScope.js';

/**
 * api-smart-diff's own OpenAPI 3.1 rules, with the verdicts it gets wrong for our clients
 * replaced (test/tools/breaking.test.ts has a case for each). A rule tree mirrors the document
 * ('/paths', '/*', ...); a classifier is [add, remove, replace] for a request, then optionally
 * [add, remove, replace] for a response, which otherwise gets the request's verdicts reversed:
 * what lets a request send more lets a response send more too, and only the latter breaks.
 */

type RuleNode = Record<string, unknown>;
type Path = readonly (string | number)[];
type Classifier = (ctx: ComapreContext) => DiffType;

const isNode = (value: unknown): value is RuleNode => typeof value === 'object' && value !== null;
const at = (root: unknown, path: Path): unknown => path.reduce<unknown>((node, key) => (isNode(node) ? node[key] : undefined), root);
const breakingIf = (condition: boolean): DiffType => (condition ? breaking : nonBreaking);
const ALL_BREAKING: ClassifyRule = [breaking, breaking, breaking];

/** The tool's rule at `keys`; a new version that moved it must fail loudly, not judge silently. */
function rule(rules: unknown, ...keys: string[]): RuleNode {
  const node = at(rules, keys);
  if (!isNode(node)) throw new Error(`api-smart-diff has no rule ${keys.join('')} any more: update scripts/lib/contract/breakingRules.ts`);
  return node;
}

const INT_BITS: Record<string, number> = { int32: 32, int64: 64 };
/** int64 -> int32 only narrows and int32 -> int64 only widens; any other format change does both. */
const formatChange = (ctx: ComapreContext, narrows: boolean): DiffType => {
  const [was, is] = [INT_BITS[String(ctx.before.value)], INT_BITS[String(ctx.after.value)]];
  return breakingIf(was === undefined || is === undefined || (narrows ? is < was : is > was));
};

/**
 * A replaced pattern judged by what it accepts (./patternScope.ts), not by its text: a rewrite
 * that accepts the same strings (`\p{Cc}` spelled as ranges) breaks nobody; one that accepts more
 * breaks only a response's reader, one that accepts less only a request's sender.
 */
const patternChange = (ctx: ComapreContext, narrows: boolean): DiffType => {
  const relation = comparePatterns(String(ctx.before.value), String(ctx.after.value));
  return breakingIf(relation === 'other' || relation === (narrows ? 'narrower' : 'wider'));
};

/**
 * JSON Schema rules for requests, and the same reversed for responses. Patched in place: each
 * call builds them fresh, and nested schemas (properties, items) share them, so a patch reaches every depth.
 */
function schemaRules(): { request: CompareRules; response: CompareRules } {
  const rules = openApiSchemaRules({ version: '3.1.x' });
  rule(rules, '/format').$ = [breaking, nonBreaking, (ctx: ComapreContext) => formatChange(ctx, true), nonBreaking, breaking, (ctx: ComapreContext) => formatChange(ctx, false)];
  rule(rules, '/pattern').$ = [breaking, nonBreaking, (ctx: ComapreContext) => patternChange(ctx, true), nonBreaking, breaking, (ctx: ComapreContext) => patternChange(ctx, false)];
  // Another type sends values an old client cannot read, as surely as it refuses ones it sends.
  rule(rules, '/type').$ = [breaking, nonBreaking, breaking, nonBreaking, breaking, breaking];
  // A default does not excuse a client from sending a property that is now required.
  rule(rules, '/required', '/*').$ = [breaking, nonBreaking, breaking];
  // A new value in a response breaks a client unless the released contract said the enum grows.
  const extensible: Classifier = ({ before }) => breakingIf(at(before.root, [...before.path.slice(0, -2), 'x-extensible-enum']) !== true);
  rule(rules, '/enum', '/*').$ = [nonBreaking, breaking, breaking, extensible, nonBreaking, breaking];
  // A removed property breaks both ways: additionalProperties: false refuses it in a request,
  // and a client may read it from a response even when it was optional.
  const properties = rule(rules, '/properties');
  const property = properties['/*'] as (node: unknown) => RuleNode;
  properties['/*'] = (node: unknown) => ({ ...property(node), $: [nonBreaking, breaking, breaking, nonBreaking, breaking, breaking] });
  // The tool lets a request schema close (additionalProperties: false, items) unnoticed; a
  // response that closes only narrows, and clients ignore properties they do not know.
  const closing: Classifier = ({ after }) => breakingIf(after.value === false);
  const request = transformComapreRules(rules, (node) =>
    node.$ === allNonBreaking && node.annotate === jsonSchemaKeyChange ? { ...node, $: [breaking, nonBreaking, closing, nonBreaking, nonBreaking, nonBreaking] } : node,
  );
  return { request, response: transformComapreRules(request, reverseClassifyRuleTransformer) };
}

/** The rules for apiCompare on two dereferenced OpenAPI 3.1 documents. */
export function breakingChangeRules(): CompareRules {
  const rules = openapi3Rules({ version: '3.1.x' });
  const schemas = schemaRules();
  const operation = rule(rules, '/paths', '/*', '/*');
  // Generated clients call an operation by its operationId.
  operation['/operationId'] = { $: [nonBreaking, breaking, breaking], annotate: () => undefined };
  // A typed client breaks on any change of a parameter's type, even one a query string could carry.
  rule(operation, '/parameters', '/*')['/schema'] = () => ({ ...schemas.request, $: ALL_BREAKING });
  // One content rule serves requests and responses: the direction comes from the path.
  rule(operation, '/requestBody', '/content', '/*')['/schema'] = ({ path }: { path: Path }) => ({ ...(isResponseSchema([...path]) ? schemas.response : schemas.request), $: ALL_BREAKING });
  // A body that must be sent, added to an operation, breaks every existing call.
  rule(operation, '/requestBody').$ = [({ after }: ComapreContext) => breakingIf(at(after.value, ['required']) === true), breaking, breaking];
  // Response headers are read, not sent: the tool judges their `required` as a request's.
  const headers = rule(operation, '/responses', '/*', '/headers');
  rule(operation, '/responses', '/*')['/headers'] = {
    ...headers,
    '/*': {
      ...rule(headers, '/*'),
      '/required': { $: [nonBreaking, ({ before }: ComapreContext) => breakingIf(before.value === true), ({ after }: ComapreContext) => breakingIf(after.value !== true)] },
      '/schema': () => ({ ...schemas.response, $: ALL_BREAKING }),
    },
  };
  // A public operation (`security: []`) that falls back to the document's security needs a key now.
  const security = rule(operation, '/security');
  const [add, remove, replace] = security.$ as ClassifyRule;
  const nowSecured: Classifier = (ctx) => {
    const documentSecurity = at(ctx.after.root, ['security']);
    if (emptySecurity(ctx.before.value) && Array.isArray(documentSecurity) && !emptySecurity(documentSecurity)) return breaking;
    return typeof remove === 'function' ? remove(ctx) : remove;
  };
  security.$ = [add, nowSecured, replace];
  security.annotate = () => undefined; // the line reads "security removed", not "annotation (security)"
  // A new security scheme breaks no client; an operation that starts to require it does.
  rule(rules, '/components', '/securitySchemes', '/*').$ = [nonBreaking, breaking, breaking];
  (rules as RuleNode)['/webhooks'] = webhookRules(operation, schemas.response);
  return rules;
}

/**
 * api-smart-diff judges nothing under `webhooks`. A webhook is sent by the API and read by its
 * receivers, so its request (body and headers) is judged as a response is: what a receiver read
 * may not go or loosen, and new values break it; a new webhook breaks nobody, a removed one
 * leaves every receiver waiting. What a receiver answers is never a break: any 2xx is delivered
 * (docs/operations.md).
 */
function webhookRules(operation: RuleNode, sent: CompareRules): RuleNode {
  const asSent = () => ({ ...sent, $: ALL_BREAKING });
  const body = rule(operation, '/requestBody');
  const content = rule(body, '/content');
  const header = {
    $: [nonBreaking, breaking, breaking],
    '/required': { $: [nonBreaking, ({ before }: ComapreContext) => breakingIf(before.value === true), ({ after }: ComapreContext) => breakingIf(after.value !== true)] },
    '/schema': asSent,
  };
  const parameters = { ...rule(operation, '/parameters'), $: [nonBreaking, breaking, breaking], '/*': { ...rule(operation, '/parameters', '/*'), ...header } };
  const sentOperation = {
    ...operation,
    $: [nonBreaking, breaking, breaking],
    '/parameters': parameters,
    '/requestBody': {
      ...body,
      $: [nonBreaking, breaking, breaking],
      '/required': { $: [nonBreaking, breaking, ({ after }: ComapreContext) => breakingIf(after.value !== true)] },
      '/content': { ...content, '/*': { ...rule(content, '/*'), '/schema': asSent } },
    },
    '/responses': { $: allNonBreaking, '/**': { $: allNonBreaking } },
  };
  return { '/*': { $: [nonBreaking, breaking, breaking], transform: [transformPathItems], '/parameters': parameters, '/*': sentOperation } };
}
