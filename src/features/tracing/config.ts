/**
 * Whether traces are on, read at start from the OpenTelemetry SDK's own variables (./feature.ts);
 * light, so the SDK (./tracing.ts) is loaded only when they ask.
 */
import { ConfigError, readOneOf, readUrl, type Env } from '../../shared/env.js';

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (the OTLP default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json';
}

/**
 * Traces are on when the OpenTelemetry SDK's own variables name an OTLP endpoint
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), or when OTEL_SDK_DISABLED=false
 * asks for the SDK at its default endpoint (http://localhost:4318). A stock SDK is on unless
 * disabled; this server is off unless asked, so a deployment that sets none of them loads nothing.
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turns traces off whatever else is set. The
 * SDK reads the rest itself (headers, timeout, sampler, service name, batching); what is checked
 * here is what it would only warn about at run time while losing every span: a malformed endpoint,
 * an exporter or protocol this server does not ship (gRPC).
 */
export function readTracing(env: Env): TracingConfig | undefined {
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase();
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (disabled === 'true' || exporter === 'none') return undefined;
  const tracesEndpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:'], 'http://collector:4318/v1/traces', true);
  const endpoint = readUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:'], 'http://collector:4318', true);
  if (tracesEndpoint === undefined && endpoint === undefined && disabled !== 'false') return undefined;
  if (exporter !== undefined && exporter !== '' && exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none; got "${env.OTEL_TRACES_EXPORTER ?? ''}"`);
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = readOneOf(env, name, ['http/protobuf', 'http/json', 'grpc'], 'http/protobuf');
  if (protocol === 'grpc') throw new ConfigError(`${name}=grpc is not supported: use http/protobuf (the default, to the collector's OTLP/HTTP port, 4318) or http/json`);
  return { protocol };
}
