/**
 * OpenTelemetry traces, loaded by ./feature.ts only when the SDK's variables ask for them
 * (./config.ts, readTracing): a SERVER span per request, a CLIENT span per database query under
 * it, exported over OTLP/HTTP by the SDK's batch span processor, and the active span's ids on every
 * log line written inside it. Nothing else imports OpenTelemetry, so with tracing off none of it is
 * loaded (src/features/tracing/tracing.test.ts from the sources, test/processes/tracingBundle.test.ts in the bundle).
 *
 * Why spans are started here, with the OpenTelemetry API, rather than by the maintained
 * instrumentations (instrumentation-http, instrumentation-pg): those patch a module as `require`
 * loads it. The production server is one ES module bundle (esbuild) in which Kysely, pg and the
 * rest are inlined, never required by name, so the hooks see nothing there, and seeing ES module
 * imports at all takes a loader flag on every start, traced or not. better-sqlite3 has no maintained
 * instrumentation (one third-party package, a require hook too). And no instrumentation knows what
 * makes these spans useful: the operation openapi-backend routed to, with its route template, and
 * the one query path serving both dialects (src/store/queries/prepared.ts). So this module is the
 * request path's first stage, and fills the store's one hook (src/store/queries/prepared.ts
 * QueryTracer), with the SDK's tracer, its W3C propagator and its context manager.
 *
 * Conventions followed (OpenTelemetry semantic conventions, stable HTTP and database spans):
 * - the request: name `{method} {http.route}` (`GET /v1/pets/{petId}`), or `{method}` when no route
 *   matched; `http.request.method` (`_OTHER` and `http.request.method_original` for a method the
 *   conventions do not know), `url.path` and `url.query` (API keys masked as in the request log),
 *   `url.scheme`, `server.address` and `server.port` from `Host`, `client.address` and
 *   `network.peer.*` (the connection's peer: no forwarding header is trusted),
 *   `network.protocol.version`, `user_agent.original`; at the end `http.route`,
 *   `http.response.status_code` (when one was sent), and `error.type` with an error status for a 5xx
 *   (the status) or an answer cut short (`aborted`, as the metrics say). The operationId has no
 *   conventional attribute: it is `animal_store.operation_id`, in the service's own namespace;
 * - a query: name and `db.query.summary` as the conventions generate it from the SQL (`SELECT pets`),
 *   `db.system.name`, `db.operation.name`, `db.collection.name` when the query names one table,
 *   `db.query.text` (compiled text, placeholders only: values are bound, never in it), and for
 *   PostgreSQL `db.namespace`, `server.address`, `server.port`; on failure `error.type` and
 *   `db.response.status_code` (the driver's code), never the message (it can quote values).
 *   Only a query run inside a request's span gets one: the key reloads, the purge and the call log
 *   run outside any request, and a trace of their own every few seconds would be noise. A group
 *   commit (src/store/queries/batcher.ts) runs in the context of the create that opened it, so the inserts
 *   of the creates that joined it appear under that one request.
 */
import { context, diag, DiagLogLevel, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OTLPJsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OTLPProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_NAMESPACE,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_QUERY_TEXT,
  ATTR_DB_RESPONSE_STATUS_CODE,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_METHOD_ORIGINAL,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PEER_ADDRESS,
  ATTR_NETWORK_PEER_PORT,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
  DB_SYSTEM_NAME_VALUE_POSTGRESQL,
} from '@opentelemetry/semantic-conventions';
import { redactApiKeys } from '../../domain/apiKey.js';
import type { TracingConfig } from './config.js';
import type { Stage } from '../../http/stage.js';
import { ABORTED, conventionalMethod, routes, URL_SCHEME } from '../../http/conventions.js';
import type { Exchange } from '../../http/exchange.js';
import { withContextFields, type Logger } from '../../shared/logger.js';
import type { OpenApiDocument } from '../../shared/spec.js';
import type { QueryTracer } from '../../store/queries/prepared.js';
import type { Dialect } from '../../store/schema.js';

export interface TracingOptions {
  config: TracingConfig;
  /** The contract the server runs: each operation's route is its path template under the base path. */
  document: OpenApiDocument;
  /** Where the SDK's own complaints go (an export that failed, a full queue). */
  logger: Logger;
}

export interface Tracing {
  /** The request path's first stage. */
  requests: Stage;
  /** The store's hook for the compiled queries of one database (src/store/queries/prepared.ts, traceQueries). */
  queries(database: { dialect: Dialect; location: string }): QueryTracer;
  /** `logger`, whose lines carry `trace_id`, `span_id` and `trace_flags` while a span is active. */
  correlated(logger: Logger): Logger;
  /** Exports what is still buffered (within SHUTDOWN_FLUSH_MS) and lets go of the API's globals. */
  shutdown(): Promise<void>;
}

/** The instrumentation scope: this service's own code, not a library's instrumentation. */
const SCOPE = 'animal-store-api';
/** service.name unless OTEL_SERVICE_NAME (or OTEL_RESOURCE_ATTRIBUTES) says otherwise: the logs' `service`. */
const SERVICE_NAME = 'animal-store-api';
/**
 * The longest a stop waits for the last spans to reach the collector: an unreachable one would
 * otherwise hold the stop for the exporter's own timeout, and the supervisor's patience is shared
 * with the drain and the requests in flight (docs/operations.md, Running N instances).
 */
const SHUTDOWN_FLUSH_MS = 5_000;
/** The conventions have no attribute for an OpenAPI operationId: this one is in the service's own namespace. */
const ATTR_OPERATION_ID = 'animal_store.operation_id';
/** Incubating in the conventions (stable ones are imported): copied, as the conventions' package advises. */
const DB_SYSTEM_NAME_VALUE_SQLITE = 'sqlite';
/** db.query.summary's length at most, as the conventions advise (255). */
const MAX_SUMMARY = 255;

export function startTracing(options: TracingOptions): Tracing {
  const { logger } = options;
  // The SDK reports through `diag`, silent unless given a logger: a collector that refuses every
  // export would otherwise lose every span without a word.
  const complain = (message: string, ...args: unknown[]) => logger.warn({ detail: args.map(String).join(' ').slice(0, 1000) }, `OpenTelemetry: ${message}`);
  diag.setLogger({ error: complain, warn: complain, info: () => undefined, debug: () => undefined, verbose: () => undefined }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });

  // Either exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS, _TIMEOUT and _COMPRESSION
  // itself. Both are imported statically: both are thin over the same OTLP base, and a dynamic
  // import of one (a CommonJS package) has no named exports inside the esbuild bundle.
  const exporter: SpanExporter = options.config.protocol === 'http/json' ? new OTLPJsonTraceExporter() : new OTLPProtobufTraceExporter();
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (envDetector) win over our default name.
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
  // The sampler (OTEL_TRACES_SAMPLER, _ARG) and span limits come from the environment in the
  // provider, the batch sizes and delays (OTEL_BSP_*) in the processor.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // W3C Trace Context only (`traceparent`, `tracestate`), and AsyncLocalStorage as the context
  // manager, so a span started for a request is the active one in everything its answer awaits.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer = provider.getTracer(SCOPE);
  const routeOf = routes(options.document);

  /**
   * The first stage: starts the request's SERVER span (a child of the caller's `traceparent`, if
   * any), ends it when the response is done, and runs the rest of the path inside it, so the
   * queries and log lines of the request, its refusal's too, belong to it.
   */
  const requests: Stage = {
    name: 'tracing',
    run(exchange, next) {
      const { req, res } = exchange;
      const sent = req.method ?? '';
      const method = conventionalMethod(sent);
      const parent = propagation.extract(ROOT_CONTEXT, req.headers);
      const span = tracer.startSpan(method === '_OTHER' ? 'HTTP' : method, { kind: SpanKind.SERVER, attributes: requestAttributes(exchange, method) }, parent);
      // 'close' comes once per response: after it was handed to the OS, or when the connection was lost first.
      res.on('close', () => endRequest(span, exchange, method, routeOf(exchange)));
      return context.with(trace.setSpan(parent, span), next, undefined, exchange);
    },
  };

  const queries = ({ dialect, location }: { dialect: Dialect; location: string }): QueryTracer => {
    const shared = databaseAttributes(dialect, location);
    return (sql) => {
      const { summary, operation, collection } = summarise(sql);
      const attributes: Attributes = { ...shared, [ATTR_DB_QUERY_TEXT]: sql };
      if (summary !== '') attributes[ATTR_DB_QUERY_SUMMARY] = summary;
      if (operation !== undefined) attributes[ATTR_DB_OPERATION_NAME] = operation;
      if (collection !== undefined) attributes[ATTR_DB_COLLECTION_NAME] = collection;
      const name = summary || operation || String(shared[ATTR_DB_SYSTEM_NAME]);
      return (run) => {
        const active = context.active();
        if (trace.getSpan(active) === undefined) return run();
        const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, active);
        return run().then(
          (rows) => {
            span.end();
            return rows;
          },
          (error: unknown) => {
            failQuery(span, error);
            span.end();
            throw error;
          },
        );
      };
    };
  };

  const logFields = (): Record<string, string> | undefined => {
    const span = trace.getSpan(context.active());
    if (span === undefined) return undefined;
    const { traceId, spanId, traceFlags } = span.spanContext();
    return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, '0') };
  };

  let stopped: Promise<void> | undefined;
  const shutdown = () =>
    (stopped ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), SHUTDOWN_FLUSH_MS);
      });
      const outcome = await Promise.race([provider.shutdown().then(() => 'done' as const), late]).catch((error: unknown) => {
        logger.warn({ err: error }, 'OpenTelemetry: the last spans could not be exported');
        return 'failed' as const;
      });
      clearTimeout(timer);
      if (outcome === 'late') logger.warn({ waitedMs: SHUTDOWN_FLUSH_MS }, 'OpenTelemetry: the last spans were not all exported before the stop');
      // A later start in the same process (tests) registers afresh.
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    })());

  return { requests, queries, correlated: (base) => withContextFields(base, logFields), shutdown };
}

/** What is known of a request when it arrives (the conventions ask for these at the span's start, for samplers). */
function requestAttributes(exchange: Exchange, method: string): Attributes {
  const { req } = exchange;
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: method,
    [ATTR_URL_SCHEME]: URL_SCHEME,
    [ATTR_URL_PATH]: redactApiKeys(query === -1 ? url : url.slice(0, query)),
    [ATTR_NETWORK_PROTOCOL_VERSION]: req.httpVersion,
  };
  if (method !== req.method && req.method !== undefined) attributes[ATTR_HTTP_REQUEST_METHOD_ORIGINAL] = req.method;
  if (query !== -1) attributes[ATTR_URL_QUERY] = redactApiKeys(url.slice(query + 1));
  const server = hostAndPort(req.headers.host);
  if (server !== undefined) {
    attributes[ATTR_SERVER_ADDRESS] = server.address;
    attributes[ATTR_SERVER_PORT] = server.port;
  }
  const { remoteAddress, remotePort } = req.socket;
  if (remoteAddress !== undefined) {
    attributes[ATTR_CLIENT_ADDRESS] = remoteAddress;
    attributes[ATTR_NETWORK_PEER_ADDRESS] = remoteAddress;
    if (remotePort !== undefined) attributes[ATTR_NETWORK_PEER_PORT] = remotePort;
  }
  const userAgent = req.headers['user-agent'];
  if (userAgent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = userAgent;
  return attributes;
}

/** `Host` as the conventions read it: name (an IPv6 address without its brackets) and port, the scheme's 80 when none is written. */
function hostAndPort(host: string | undefined): { address: string; port: number } | undefined {
  if (host === undefined || host === '') return undefined;
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host);
  if (match === null) return undefined;
  const name = match[1] as string;
  return { address: name.startsWith('[') ? name.slice(1, -1) : name, port: match[2] === undefined ? 80 : Number(match[2]) };
}

/** What the answer came to, once its response is done or its connection lost, then the span's end. */
function endRequest(span: Span, exchange: Exchange, method: string, route: string | undefined): void {
  const { res } = exchange;
  const finished = res.writableFinished;
  if (finished || res.headersSent) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
  if (route !== undefined) {
    span.setAttribute(ATTR_HTTP_ROUTE, route);
    span.updateName(`${method === '_OTHER' ? 'HTTP' : method} ${route}`);
  }
  const operationId = exchange.operation?.operationId;
  if (operationId !== undefined) span.setAttribute(ATTR_OPERATION_ID, operationId);
  // A 4xx is the client's mistake: the conventions leave a server span's status unset for it.
  const error = !finished ? ABORTED : res.statusCode >= 500 ? String(res.statusCode) : undefined;
  if (error !== undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, error);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The attributes every query of one database shares: its system and, on PostgreSQL, where it is (the URL without its password). */
function databaseAttributes(dialect: Dialect, location: string): Attributes {
  if (dialect === 'sqlite') return { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_SQLITE };
  const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL };
  let url: URL | undefined;
  try {
    url = new URL(location);
  } catch {
    // PGlite in tests, or a URL the driver reads otherwise: nothing more is known without asking the database.
    return attributes;
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database !== '') attributes[ATTR_DB_NAMESPACE] = database;
  if (url.hostname !== '') {
    attributes[ATTR_SERVER_ADDRESS] = url.hostname.replace(/^\[(.*)\]$/, '$1');
    // The conventions want the port only when it is not the database's default.
    if (url.port !== '' && url.port !== '5432') attributes[ATTR_SERVER_PORT] = Number(url.port);
  }
  return attributes;
}

/** A failed query: its class by the driver's code (SQLite's `SQLITE_BUSY`, PostgreSQL's SQLSTATE), else the error's name. */
function failQuery(span: Span, error: unknown): void {
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  if (code !== undefined) span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
  span.setAttribute(ATTR_ERROR_TYPE, code ?? (error instanceof Error ? error.name : '_OTHER'));
  // No description: a driver's message can quote the values of the row it refused.
  span.setStatus({ code: SpanStatusCode.ERROR });
}

const OPERATIONS: ReadonlySet<string> = new Set(['select', 'insert', 'update', 'delete']);
/** Words after which the tables of a FROM list have ended. */
const CLAUSES: ReadonlySet<string> = new Set(['where', 'group', 'order', 'limit', 'having', 'union', 'on', 'using', 'set', 'values', 'returning', 'window', 'offset']);
/** String literals, quoted identifiers, comments, words, and any other single character. */
const TOKENS = /'(?:[^']|'')*'|"((?:[^"]|"")*)"|--[^\n]*|\/\*[\s\S]*?\*\/|([A-Za-z_][A-Za-z0-9_$.]*)|(\S)/g;

/**
 * The conventions' query summary, generated from the SQL as they describe it: each operation and
 * each table it names, in the order they appear (`SELECT pets`; a subquery adds its own,
 * `SELECT SELECT pets`), at most 255 characters. Kysely's quoting of identifiers is its own, not the
 * application's spelling, so `"pets"` is summarised as `pets`. The statement's verb is its
 * `db.operation.name`; one table named throughout is its `db.collection.name`. Done once per query,
 * when it is compiled.
 */
export function summarise(sql: string): { summary: string; operation: string | undefined; collection: string | undefined } {
  const parts: string[] = [];
  const tables = new Set<string>();
  let operation: string | undefined;
  let expectTable = false;
  let inFromList = false;
  let previous = '';
  const tokens = [...sql.matchAll(TOKENS)];
  for (const [i, token] of tokens.entries()) {
    const quoted = token[1];
    const word = token[2];
    const symbol = token[3];
    const lower = word?.toLowerCase();
    if (lower !== undefined && OPERATIONS.has(lower) && !(lower === 'update' && previous === 'do')) {
      // `on conflict … do update` is part of its INSERT, not an operation of its own.
      const verb = lower.toUpperCase();
      parts.push(verb);
      operation ??= verb;
      expectTable = lower === 'update';
      inFromList = false;
    } else if (lower === 'from' || lower === 'join' || lower === 'into') {
      expectTable = true;
      inFromList = lower !== 'into';
    } else if (expectTable && (quoted !== undefined || word !== undefined)) {
      expectTable = false;
      // In a FROM list, a name followed by `(` is a function (`unnest(…)`), not a table; after INTO it is the column list.
      if (!inFromList || tokens[i + 1]?.[3] !== '(') {
        const table = quoted !== undefined ? quoted.replaceAll('""', '"') : (word as string);
        parts.push(table);
        tables.add(table);
      }
    } else if (symbol === ',' && inFromList) {
      expectTable = true;
    } else {
      expectTable = false;
      if (symbol === '(' || (lower !== undefined && CLAUSES.has(lower))) inFromList = false;
    }
    if (lower !== undefined) previous = lower;
  }
  let summary = '';
  for (const part of parts) {
    const next = summary === '' ? part : `${summary} ${part}`;
    if (next.length > MAX_SUMMARY) break;
    summary = next;
  }
  return { summary, operation, collection: tables.size === 1 ? [...tables][0] : undefined };
}
