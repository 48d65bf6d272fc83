/** Test support: the log records one component writes (at warn and above) while a function runs. */
import { setLogger, type Logger } from '../../src/util/log.js';

/**
 * Runs `fn` with a logger that keeps warn and error records: those of `component` go to `lines` as
 * "LEVEL [component] message", the others to stderr. The default logger is back afterwards.
 */
export async function withWarnings<T>(component: string, fn: (lines: string[]) => Promise<T>): Promise<T> {
  const lines: string[] = [];
  const keep = (level: string) => (fields: object, message: string): void => {
    const from = (fields as { component?: string }).component;
    const line = `${level} [${from}] ${message}`;
    if (from === component) lines.push(line);
    else process.stderr.write(`${line}\n`);
  };
  const capture: Logger = {
    error: keep('ERROR'), warn: keep('WARN'), info: () => undefined, debug: () => undefined, trace: () => undefined,
    isLevelEnabled: (level: string) => level === 'warn' || level === 'error',
  };
  setLogger(capture);
  try {
    return await fn(lines);
  } finally {
    setLogger(undefined);
  }
}
