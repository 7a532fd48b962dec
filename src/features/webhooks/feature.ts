/**
 * The spec's webhooks, delivered (./dispatcher.ts) from the outbox handlers write to
 * (src/store/resources/webhooks.ts) to the endpoints operators add (`npm run webhooks`). On
 * whenever the contract declares webhooks and WEBHOOKS_DELIVERY is not off; no stage: nothing of
 * it is on the request path.
 */
import type { Feature } from '../feature.js';
import { readWebhookSettings } from './config.js';
import { createDeliveryQueries } from './deliveries.js';
import { startDispatcher } from './dispatcher.js';
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
      const dispatcher = startDispatcher(createDeliveryQueries(host.database), settings, host.logger, { observers: host.observers, headers: declaredHeaders(host.document) });
      host.observers.eventsCommitted = () => dispatcher.wake();
      return { close: () => dispatcher.close(CLOSE_WAIT_MS) };
    };
  },
};
