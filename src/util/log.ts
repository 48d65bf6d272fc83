/**
 * Levelled logging to stderr, quiet by default (warnings and errors only). `TIDEPOOL_LOG`
 * or `setLogLevel` raises it; `TIDEPOOL_LOG_FORMAT=json` switches to one JSON object per line.
 */
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

let level: LogLevel = parseLevel(process.env.TIDEPOOL_LOG) ?? 'warn';
let json = process.env.TIDEPOOL_LOG_FORMAT === 'json';

export function parseLevel(value: string | undefined): LogLevel | undefined {
  return value !== undefined && value in ORDER ? (value as LogLevel) : undefined;
}

export function setLogLevel(next: LogLevel): void {
  level = next;
}

export function setLogFormat(format: 'text' | 'json'): void {
  json = format === 'json';
}

export function logEnabled(at: LogLevel): boolean {
  return ORDER[at] <= ORDER[level];
}

function write(at: LogLevel, component: string, message: string, detail?: unknown): void {
  if (!logEnabled(at)) return;
  const time = new Date().toISOString();
  if (json) {
    const extra = detail instanceof Error ? { error: detail.message } : detail === undefined ? {} : { detail };
    process.stderr.write(`${JSON.stringify({ time, level: at, component, message, ...extra }, bigintSafe)}\n`);
    return;
  }
  const suffix = detail === undefined ? '' : ` ${detail instanceof Error ? detail.message : JSON.stringify(detail, bigintSafe)}`;
  process.stderr.write(`${time} ${at.toUpperCase().padEnd(5)} [${component}] ${message}${suffix}\n`);
}

function bigintSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

export const log = {
  error: (component: string, message: string, detail?: unknown) => write('error', component, message, detail),
  warn: (component: string, message: string, detail?: unknown) => write('warn', component, message, detail),
  info: (component: string, message: string, detail?: unknown) => write('info', component, message, detail),
  debug: (component: string, message: string, detail?: unknown) => write('debug', component, message, detail),
  trace: (component: string, message: string, detail?: unknown) => write('trace', component, message, detail),
};
