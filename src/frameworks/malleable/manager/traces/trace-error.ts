/** A malformed trace: names the file, the line and what is wrong there. */
export class TraceError extends Error {
  constructor(readonly file: string, readonly line: number, detail: string) {
    super(`${file}:${line}: ${detail}`);
    this.name = 'TraceError';
  }
}
