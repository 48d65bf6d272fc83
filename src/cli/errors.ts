import { CoordError } from '../coord/errors.js';

/** Bad flags or bad input: reported as `error: …` with exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Prints an error as one clear line (no stack trace unless TIDEPOOL_DEBUG is set) and returns the exit code. */
export function reportError(err: unknown): number {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  if (process.env.TIDEPOOL_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  if (err instanceof UsageError) return 2;
  if (err instanceof CoordError && err.code === 'BAD_ARGUMENTS') return 2;
  return 1;
}
