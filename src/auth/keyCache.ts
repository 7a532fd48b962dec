import { hashApiKey, isWellFormedApiKey } from '../domain/apiKey.js';

/**
 * A key check's answer: the caller, for a valid key (an opaque id of the key, the SHA-256 the key
 * store keeps, never the key: what idempotency records and rate limits are kept per) and the
 * scopes it holds (undefined: every scope, a key made without any), or why not.
 */
export type KeyVerdict = { caller: string; scopes?: ReadonlySet<string> | undefined } | 'invalid' | 'unavailable';

/** Where the active keys come from: the API key store (../store/apiKeys.ts), which the server hands in. */
export interface ActiveKeySource {
  /** Every key that is not revoked: its hash and its scopes (undefined: every scope). */
  activeKeys(): Promise<ReadonlyArray<{ hash: string; scopes: readonly string[] | undefined }>>;
}

export interface KeyCacheOptions {
  /** How often the set of active keys is reloaded: the bound on revocation reaching this instance. */
  refreshMs: number;
  /** After this long without a successful reload the cache refuses to answer (fails closed). */
  maxStaleMs: number;
  onRefreshError?: (error: unknown) => void;
}

/**
 * The hashes of the active keys, held in memory and reloaded on a timer, so that checking a key
 * costs one hash and one set lookup instead of a database round trip. A key revoked or created
 * on any instance takes effect here within `refreshMs` (plus one query). When reloads keep
 * failing past `maxStaleMs`, every check answers 'unavailable' rather than trusting an old set.
 */
export class KeyCache {
  /** The active keys' verdicts by hash: made once per reload, so a check allocates nothing. */
  private active = new Map<string, { caller: string; scopes?: ReadonlySet<string> }>();
  private loadedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(
    private readonly store: ActiveKeySource,
    private readonly options: KeyCacheOptions,
  ) {}

  /** Loads the keys, then reloads them every `refreshMs` until stopRefreshing. */
  async startRefreshing(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) => this.options.onRefreshError?.(error));
    }, this.options.refreshMs);
    this.timer.unref();
  }

  stopRefreshing(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Reloads now. A caller arriving while a reload is under way gets the next one, which starts
   * when the current one ends: the current one may have read the keys before the caller's change
   * (a key just created). Callers arriving meanwhile share that next reload.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.next ??= this.refreshing
        .catch(() => undefined)
        .then(() => {
          this.next = undefined;
          return this.refresh();
        });
      return this.next;
    }
    this.refreshing = this.store
      .activeKeys()
      .then((keys) => {
        this.active = new Map(keys.map(({ hash, scopes }) => [hash, scopes === undefined ? { caller: hash } : { caller: hash, scopes: new Set(scopes) }]));
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /** When the keys last loaded successfully (ms since the epoch), undefined before the first load: the metrics' cache age. */
  lastLoadedAt(): number | undefined {
    return this.loadedAt === 0 ? undefined : this.loadedAt;
  }

  /** How many keys are active, as last loaded. */
  activeCount(): number {
    return this.active.size;
  }

  check(token: string | undefined): KeyVerdict {
    if (token === undefined || !isWellFormedApiKey(token)) return 'invalid';
    if (Date.now() - this.loadedAt > this.options.maxStaleMs) return 'unavailable';
    return this.active.get(hashApiKey(token)) ?? 'invalid';
  }
}
