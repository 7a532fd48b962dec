/**
 * The spec's webhooks, delivered (./dispatcher.ts) from the outbox handlers write to
 * (src/store/resources/webhooks.ts) to the endpoints operators add (`npm run webhooks`). On
 * whenever the contract declares webhooks and WEBHOOKS_DELIVERY is not off. Its one stage only
 * counts requests, so delivery can give way to them (./giveWay.ts).
 */
import type { Stage } from '../../http/stage.js';
import type { Feature } from '../feature.js';
import { readWebhookSettings } from './config.js';
import { createDeliveryQueries } from './deliveries.js';
import { startDispatcher } from './dispatcher.js';
import { giveWayToRequests } from './giveWay.js';
import { declaredHeaders } from './headers.js';

/** How long a close waits for the attempts in flight; those it cannot wait for resume after their lease. */
const CLOSE_WAIT_MS = 5_000;

export const webhooks: Feature = {
  name: 'webhooks',
  configure(env) {
    const settings = readWebhookSettings(env);
    if (!settings.deliver) return undefined;
    return (host) => {
      if (Object.keys((host.document as { webhooks?: object }).webhooks ?? {}).length === 0) return {};
      const giveWay = giveWayToRequests(settings.concurrency, { raised: () => dispatcher.wake() });
      const dispatcher = startDispatcher(createDeliveryQueries(host.database), settings, host.logger, { observers: host.observers, headers: declaredHeaders(host.document), limit: giveWay.limit });
      host.observers.eventsCommitted = () => dispatcher.wake();
      // First, so every request counts, a refused one too: all of them wait on the same loop.
      const requestsSeen: Stage = {
        name: 'webhooks',
        run(exchange, next) {
          giveWay.requestSeen();
          return next(exchange);
        },
      };
      return {
        stages: [{ before: 'probes', stage: requestsSeen }],
        close: () => {
          giveWay.stop();
          return dispatcher.close(CLOSE_WAIT_MS);
        },
      };
    };
  },
};
