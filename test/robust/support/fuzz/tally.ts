/** Counts of what was actually sent and answered, per operation, for the printed figures. */

export type Kind = 'valid' | 'invalid';

interface OperationTally {
  valid: number;
  invalid: number;
  statuses: Map<number, number>;
}

export class Tally {
  private readonly ops = new Map<string, OperationTally>();
  fiveHundreds = 0;
  created = 0;
  verified = 0;

  record(operationId: string, kind: Kind, status: number): void {
    let t = this.ops.get(operationId);
    if (!t) {
      t = { valid: 0, invalid: 0, statuses: new Map() };
      this.ops.set(operationId, t);
    }
    t[kind]++;
    t.statuses.set(status, (t.statuses.get(status) ?? 0) + 1);
    if (status >= 500) this.fiveHundreds++;
  }

  requests(operationId: string): number {
    const t = this.ops.get(operationId);
    return t ? t.valid + t.invalid : 0;
  }

  /** How many of the operation's answers had each status. */
  statuses(operationId: string): ReadonlyMap<number, number> {
    return this.ops.get(operationId)?.statuses ?? new Map();
  }

  summary(): string {
    const parts = [...this.ops.entries()].map(([op, t]) => {
      const statuses = [...t.statuses.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
      return `${op} ${t.valid + t.invalid} requests (${t.valid} valid, ${t.invalid} invalid; ${statuses})`;
    });
    return `${parts.join(', ')}; ${this.fiveHundreds} 5xx; ${this.created} pets created and verified (${this.verified} round-trip reads)`;
  }
}
