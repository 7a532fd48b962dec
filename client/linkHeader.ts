/**
 * The Link header (RFC 8288 §3): `<target>; rel="next"; type="text/html", <other>; rel=prev`.
 * Commas and semicolons may sit inside `<…>` and inside quoted strings, so the value is scanned,
 * not split. `rel` may name several relation types at once (`rel="next last"`); they are compared
 * case-insensitively, so they come back in lower case.
 */

/** Each relation type to its target (the first link wins), or undefined when the value is not a Link field. */
export function parseLinkTargets(field: string): Record<string, string> | undefined {
  const targets: Record<string, string> = {};
  const link = /\s*<([^>]*)>((?:\s*;\s*[!#$%&'*+\-.^_`|~0-9A-Za-z]+\*?(?:\s*=\s*(?:"(?:[^"\\]|\\.)*"|[^;,\s]*))?)*)\s*(?:,|$)/y;
  const param = /;\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+\*?)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^;,\s]*))?/g;
  while (link.lastIndex < field.length) {
    const start = link.lastIndex;
    const match = link.exec(field);
    if (!match || match.index !== start || match[0].length === 0) return undefined;
    const [, target = '', params = ''] = match;
    for (const [, name = '', raw = ''] of params.matchAll(param)) {
      if (name.toLowerCase() !== 'rel') continue;
      const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw;
      for (const rel of value.toLowerCase().split(/\s+/).filter(Boolean)) targets[rel] ??= target;
      // RFC 8288 §3.3: only the first rel parameter of a link counts.
      break;
    }
  }
  return targets;
}
