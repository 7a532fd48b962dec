/**
 * What a feature is (Fastify's plugins, Connexion's middleware list): a folder under
 * src/features/ exporting one `Feature`, which reads its own settings from the environment and,
 * when they turn it on, starts into a stage of the request path and a close. The request path's
 * list (src/pipeline/requestPath.ts) says where each stage goes; the server (src/server.ts) starts
 * them in that order, hands each what it may use (`FeatureHost`), and closes them in reverse. The
 * centre never names a feature's settings: adding one is its folder and one line of that list.
 */
import type { RequestListener } from 'node:http';
import type { OpenAPIBackend } from 'openapi-backend';
import type { CoreStage, Stage } from '../http/stage.js';
import type { Env } from '../shared/env.js';
import type { Logger } from '../shared/logger.js';
import type { OpenApiDocument } from '../shared/spec.js';
import type { DatabaseHandle } from '../store/database.js';

export interface Feature {
  /** Its folder's name. */
  readonly name: string;
  /**
   * Reads the feature's settings from `env`: how to start it, or undefined when it is off (then
   * nothing of it is loaded and no request pays for it). A bad value throws a ConfigError naming
   * the variable, so a start fails before anything opens.
   */
  configure(env: Env): FeatureStart | undefined;
}

/** Starts a configured feature with what it may use. */
export type FeatureStart = (host: FeatureHost) => StartedFeature | Promise<StartedFeature>;

/** A feature's stage and where it goes: before one of the server's own (Connexion's MiddlewarePosition). */
export interface PlacedStage {
  before: CoreStage;
  stage: Stage;
}

export interface StartedFeature {
  /** Its stages, each before the server's own stage it names; none when the contract gives it nothing to do. */
  stages?: readonly PlacedStage[] | undefined;
  /** Stops what it started (after the last request, before the database closes). */
  close?: (() => Promise<void> | void) | undefined;
  /** A logger for whatever starts after it (tracing: each line carries the active span's ids). */
  logger?: Logger | undefined;
  /** Headers of an answer to `origin` that node:http writes itself (a 400 or 431 of its parser: src/transport/clientError.ts). */
  headersFor?: ((origin: string | undefined) => Record<string, string> | undefined) | undefined;
  /** Where it listens of its own (`http://host:port`), when it does. */
  origin?: string | undefined;
}

/**
 * What the server hears that features may count: filled in by the feature that counts (metrics),
 * called by those that happen (the store's group commits, a deprecated call, a rate limit failing
 * open). Unset: nobody listens, nothing is done.
 */
export interface Observers {
  batch?: ((size: number) => void) | undefined;
  deprecatedCall?: ((operationId: string) => void) | undefined;
  rateLimitFailOpen?: (() => void) | undefined;
  /** Events were committed to the outbox (the webhooks feature delivers them at once). */
  eventsCommitted?: (() => void) | undefined;
  /** One attempt to deliver event `event` (a webhook's name) ended; `lagMs`, when delivered: from the event's commit to the receiver's 2xx. */
  webhookAttempt?: ((event: string, outcome: 'delivered' | 'failed' | 'gone', lagMs: number | undefined) => void) | undefined;
}

/** What a feature may use when it starts. */
export interface FeatureHost {
  document: OpenApiDocument;
  /** openapi-backend, initialised: the contract's operations dereferenced, its router. */
  backend: OpenAPIBackend;
  /** Whether a URL is under the API's base path. */
  serves(url: string): boolean;
  /** The methods the API has for a request path, as the router says (a 405's Allow). */
  allowedMethods(path: string): string[];
  database: DatabaseHandle;
  /** The server's logger, or the one a feature started before it handed on. */
  logger: Logger;
  /** When the API keys were last loaded (ms since the epoch), for a feature that reports it. */
  keysLoadedAt(): number | undefined;
  /** Shared by every feature of one server: the one that counts fills it in. */
  observers: Observers;
  /** A listener of the feature's own, with the server's bounds on slow clients (closed with the server). */
  listen(listener: RequestListener, address: { port: number; host: string; maxConnections: number }): Promise<{ origin: string; close(): Promise<void> }>;
}
