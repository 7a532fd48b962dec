/** This feature's tables (./migrations/) and the outbox it reads (src/store/resources/webhooks.ts), as Kysely sees them. */
import type { Generated } from 'kysely';
import type { Tables as Outbox } from '../../store/resources/webhooks.js';

export type Tables = Outbox & {
  webhook_endpoints: {
    id: Generated<number>;
    url: string;
    /** Webhook names, space-separated; null: every event. */
    events: string | null;
    secret: string;
    previous_secret: string | null;
    previous_until: number | null;
    created_at: number;
    disabled_at: number | null;
    disabled_reason: string | null;
    failing_since: number | null;
    last_success_at: number | null;
    last_failure_at: number | null;
  };
  webhook_deliveries: {
    id: Generated<number>;
    event_id: string;
    endpoint_id: number;
    state: DeliveryState;
    attempts: Generated<number>;
    next_attempt_at: number;
    locked_until: number | null;
    last_status: number | null;
    last_error: string | null;
    delivered_at: number | null;
  };
  webhook_attempts: {
    id: Generated<number>;
    delivery_id: number;
    endpoint_id: number;
    event_id: string;
    attempted_at: number;
    status: number | null;
    error: string | null;
    duration_ms: number;
  };
};

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** The endpoints' table: the sandbox's reset keeps it (a subscribed receiver outlives the data). */
export const ENDPOINTS_TABLE = 'webhook_endpoints' satisfies keyof Tables;
