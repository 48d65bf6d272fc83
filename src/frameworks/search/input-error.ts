/**
 * A problem in an input file, located by file name and (when it can be pinned down) a 1-based line number.
 * The message is exactly `FILE:LINE: detail` (or `FILE: detail` without a line), so the CLI can print it as
 * `error: FILE:LINE: what is wrong`.
 */
export class InputError extends Error {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    readonly detail: string,
  ) {
    super(line === undefined ? `${file}: ${detail}` : `${file}:${line}: ${detail}`);
    this.name = 'InputError';
  }
}
