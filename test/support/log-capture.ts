/** Test support: the log lines one component writes (stderr, at warn and above) while a function runs. */
import type { LogLevel } from '../../src/util/log.js';
import { LOG_LEVELS, logEnabled, setLogLevel } from '../../src/util/log.js';

/** Runs `fn` with the log at warn; the lines of `component` go to `lines` (not to stderr), the rest pass through. */
export async function withWarnings<T>(component: string, fn: (lines: string[]) => Promise<T>): Promise<T> {
  const previous: LogLevel = [...LOG_LEVELS].reverse().find((l) => l !== 'silent' && logEnabled(l)) ?? 'silent';
  const lines: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes(`[${component}]`) || text.includes(`"component":"${component}"`)) {
      lines.push(text);
      return true;
    }
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  setLogLevel('warn');
  try {
    return await fn(lines);
  } finally {
    process.stderr.write = write;
    setLogLevel(previous);
  }
}
