/**
 * Group commit: work items that arrive while a batch is being written wait for the next batch,
 * which runs as soon as the previous one is done. Under load, one transaction (and one fsync)
 * carries many items; when idle, an item waits only for the current event-loop turn to end.
 */
import { outsideUnits } from './unitOfWork.js';

export interface BatcherOptions<I, O> {
  /** Most items in one batch, so one transaction stays short. */
  maxBatch: number;
  /** Writes the items in one transaction; resolves with one result per item, in order. */
  writeBatch(items: readonly I[]): Promise<O[]>;
  /** Writes one item on its own: a batch of one, and the retry of a failed batch. */
  writeOne(item: I): Promise<O>;
  /** Whether a failed batch should be retried one item at a time (default: always). */
  retryOneByOne?(error: unknown): boolean;
  /** Hears the size of each batch written (the metrics' batch-size histogram). */
  onBatch?(size: number): void;
}

export interface Batcher<I, O> {
  add(item: I): Promise<O>;
}

interface Pending<I, O> {
  item: I;
  resolve(result: O): void;
  reject(error: unknown): void;
}

export function createBatcher<I, O>(options: BatcherOptions<I, O>): Batcher<I, O> {
  let queue: Pending<I, O>[] = [];
  let writing = false;

  /** Writes one batch and settles each of its items' promises. */
  async function writeAndSettle(batch: Pending<I, O>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch as [Pending<I, O>];
      await options.writeOne(only.item).then(only.resolve, only.reject);
      return;
    }
    try {
      const results = await options.writeBatch(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i] as O));
    } catch (error) {
      if (options.retryOneByOne && !options.retryOneByOne(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // The transaction rolled back as a whole: nothing of it is stored, so each item is retried.
      await Promise.all(batch.map((p) => options.writeOne(p.item).then(p.resolve, p.reject)));
    }
  }

  /** Writes batches until the queue is empty, each after the previous one finished. */
  async function writeQueue(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.slice(0, options.maxBatch);
      queue = queue.slice(batch.length);
      options.onBatch?.(batch.length);
      await writeAndSettle(batch);
    }
    writing = false;
  }

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (writing) return;
        writing = true;
        // Let the requests already read in this turn of the event loop join the first batch. The
        // batch serves them all: it runs outside the unit of work of the request that started it.
        outsideUnits(() => setImmediate(() => void writeQueue()));
      });
    },
  };
}
