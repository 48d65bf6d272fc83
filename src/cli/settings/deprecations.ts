/**
 * Old names and forms that still work for one release: each use prints one note on stderr (once per
 * run), so scripts keep working while their authors learn the new name. The renames are listed in
 * README's command table and docs/configuration.md.
 */

const printed = new Set<string>();

/** Prints `warning: TEXT` on stderr once per process. */
export function warnOnce(text: string): void {
  if (printed.has(text)) return;
  printed.add(text);
  process.stderr.write(`warning: ${text}\n`);
}

/** An old form that still works: says what replaces it. */
export function deprecated(note: string): void {
  warnOnce(`deprecated: ${note} (the old form goes in the next release)`);
}
