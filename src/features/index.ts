/**
 * The features, in the order they start (each may use what those before it set up: tracing's
 * logger, the metrics' observers) and close in reverse. Each stage says where it goes on the
 * request path (src/pipeline/requestPath.ts); two before the same stage run in this order.
 * Adding a feature is its folder (src/features/feature.ts says what it exports) and one line here.
 */
import { cors } from './cors/feature.js';
import { deprecation } from './deprecation/feature.js';
import { exactlyOnce } from './exactlyOnce/feature.js';
import type { Feature, FeatureHost, FeatureStart, PlacedStage } from './feature.js';
import type { Env } from '../shared/env.js';
import type { Logger } from '../shared/logger.js';
import { metrics } from './metrics/feature.js';
import { rateLimit } from './rateLimit/feature.js';
import { tracing } from './tracing/feature.js';
import { webhooks } from './webhooks/feature.js';

export const FEATURES: readonly Feature[] = [tracing, metrics, cors, deprecation, rateLimit, exactlyOnce, webhooks];

/** A feature its settings turned on, ready to start. */
export interface ConfiguredFeature {
  name: string;
  start: FeatureStart;
}

/** Reads every feature's settings from `env` (a bad value is a ConfigError naming it): those on, in FEATURES' order. */
export function configureFeatures(env: Env, features: readonly Feature[] = FEATURES): ConfiguredFeature[] {
  return features.flatMap((feature) => {
    const start = feature.configure(env);
    return start === undefined ? [] : [{ name: feature.name, start }];
  });
}

/** What the configured features started into, for the server to compose. */
export interface StartedFeatures {
  /** Every feature's stages, in FEATURES' order. */
  stages: PlacedStage[];
  /** The host's logger, or the one the last feature to hand one on gave. */
  logger: Logger;
  /** The headers features add to an answer node:http writes itself (CORS); undefined when none does. */
  headersFor: ((origin: string | undefined) => Record<string, string>) | undefined;
  /** Each feature's own listener, by its name. */
  origins: Record<string, string>;
  /** Closes them, the last started first. */
  close(): Promise<void>;
}

/**
 * Starts the configured features in order, each handed the host with what those before it set up
 * (a logger handed on, the observers filled in). A start that fails closes those already started.
 */
export async function startFeatures(configured: readonly ConfiguredFeature[], host: FeatureHost): Promise<StartedFeatures> {
  const closers: Array<() => Promise<void> | void> = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  const stages: PlacedStage[] = [];
  const headers: Array<(origin: string | undefined) => Record<string, string> | undefined> = [];
  const origins: Record<string, string> = {};
  let { logger } = host;
  try {
    for (const feature of configured) {
      const started = await feature.start({ ...host, logger });
      if (started.close) closers.push(started.close);
      if (started.logger) logger = started.logger;
      if (started.headersFor) headers.push(started.headersFor);
      if (started.origin) origins[feature.name] = started.origin;
      stages.push(...(started.stages ?? []));
    }
  } catch (error) {
    await close();
    throw error;
  }
  const headersFor = headers.length === 0 ? undefined : (origin: string | undefined) => Object.assign({}, ...headers.map((of) => of(origin))) as Record<string, string>;
  return { stages, logger, headersFor, origins, close };
}
