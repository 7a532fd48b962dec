/**
 * Named text values (a form's pairs, a multipart body's text fields) gathered into the object its
 * schema describes: an array property collects every value sent under its name, any other takes
 * exactly one (a second is a 400). The values stay text: validation coerces them by their schema,
 * as it does parameters (a form is text on the wire; a JSON body never is).
 */
import { refuse } from '../../errors/refusal.js';
import type { PartRule } from './declared.js';

export class FieldSet {
  readonly values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;

  constructor(private readonly rules: ReadonlyMap<string, Pick<PartRule, 'array'>>) {}

  add(name: string, value: unknown): void {
    const { values } = this;
    if (this.rules.get(name)?.array === true) {
      ((values[name] ??= []) as unknown[]).push(value);
      return;
    }
    if (Object.hasOwn(values, name)) throw refuse('validation_failed', 'repeatedField', name);
    values[name] = value;
  }
}
