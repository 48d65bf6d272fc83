/**
 * Structured logging, quiet by default (warnings and errors only, on stderr).
 *
 * Every record is `{ component, message, job?, node?, task?, detail | error }` written through a
 * pino-compatible `Logger`: by default a pino logger whose lines go to stderr as text, or as one JSON
 * object per line with `TIDEPOOL_LOG_FORMAT=json` / `setLogFormat('json')`; `TIDEPOOL_LOG` or
 * `setLogLevel` raises the level. A program embedding tidepool passes its own logger (`setLogger`, or
 * per node `NodeOptions.logger`); its level then decides what is written.
 *
 * Call sites keep one shape, `log.warn(component, message, detail?)`; where ids are known, a child
 * carries them as fields: `log.child({ job, node }).child({ task }).info(...)`.
 */
import { pino, stdTimeFunctions } from 'pino';

/** How much is logged, from nothing to everything (`warn` by default: warnings and errors). */
export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type RecordLevel = Exclude<LogLevel, 'silent'>;

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4, trace: 5 };

export const LOG_LEVELS = Object.keys(ORDER) as LogLevel[];

/**
 * Where records go: a pino logger fits as it is, and so does any object with these methods. Each
 * record arrives as `(fields, message)`: `fields` holds `component`, the ids (`job`, `node`, `task`)
 * and `detail` (or `error`, an error's message).
 */
export interface Logger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
  trace(fields: object, message: string): void;
  /** Optional (pino has it): lets tidepool skip building records the logger would drop. */
  isLevelEnabled?(level: string): boolean;
}

/** The ids a record may carry (bounded set of names; values are the ids themselves). */
export interface LogFields {
  job?: string;
  node?: string;
  task?: string;
}

/** tidepool's logging handle: one call shape everywhere, the fields of its context on every record. */
export interface Log {
  error(component: string, message: string, detail?: unknown): void;
  warn(component: string, message: string, detail?: unknown): void;
  info(component: string, message: string, detail?: unknown): void;
  debug(component: string, message: string, detail?: unknown): void;
  trace(component: string, message: string, detail?: unknown): void;
  /** A handle whose records carry these fields too (a later field of the same name wins). */
  child(fields: LogFields): Log;
  /** Whether a record at `level` would be written. */
  enabled(level: RecordLevel): boolean;
}

let level: LogLevel = parseLevel(process.env.TIDEPOOL_LOG) ?? 'warn';
let json = process.env.TIDEPOOL_LOG_FORMAT === 'json';

/**
 * The default logger: pino, writing through `process.stderr.write` at each record (not a file
 * descriptor of its own), so that lines keep their order with the rest of stderr.
 */
const standard = pino(
  {
    level: 'trace', // tidepool checks its own level before building a record
    base: null,
    messageKey: 'message',
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  },
  { write: (line: string) => void process.stderr.write(json ? line : textLine(line)) },
);

let current: Logger | undefined;

export function parseLevel(value: string | undefined): LogLevel | undefined {
  return value !== undefined && Object.hasOwn(ORDER, value) ? (value as LogLevel) : undefined;
}

/** The level of the default logger (a logger given with `setLogger` keeps its own). */
export function setLogLevel(next: LogLevel): void {
  level = next;
}

/** The line format of the default logger: text for people, JSON for log collectors. */
export function setLogFormat(format: 'text' | 'json'): void {
  json = format === 'json';
}

/** Sends every record not bound to a node's own logger to `logger` (undefined: back to the default). */
export function setLogger(logger: Logger | undefined): void {
  current = logger;
}

/** Whether the default logger writes records at `at` (what the level set with `setLogLevel` lets through). */
export function logEnabled(at: LogLevel): boolean {
  return ORDER[at] <= ORDER[level];
}

class FieldLog implements Log {
  /** `sink` undefined: whatever `setLogger` set last, else the default. */
  constructor(private readonly fields: LogFields, private readonly sink: Logger | undefined) {}

  error(component: string, message: string, detail?: unknown): void {
    this.write('error', component, message, detail);
  }

  warn(component: string, message: string, detail?: unknown): void {
    this.write('warn', component, message, detail);
  }

  info(component: string, message: string, detail?: unknown): void {
    this.write('info', component, message, detail);
  }

  debug(component: string, message: string, detail?: unknown): void {
    this.write('debug', component, message, detail);
  }

  trace(component: string, message: string, detail?: unknown): void {
    this.write('trace', component, message, detail);
  }

  child(fields: LogFields): Log {
    return new FieldLog({ ...this.fields, ...fields }, this.sink);
  }

  enabled(at: RecordLevel): boolean {
    const sink = this.sink ?? current;
    if (!sink) return logEnabled(at);
    return sink.isLevelEnabled ? sink.isLevelEnabled(at) : true;
  }

  private write(at: RecordLevel, component: string, message: string, detail: unknown): void {
    if (!this.enabled(at)) return;
    const extra = detail instanceof Error ? { error: detail.message } : detail === undefined ? {} : { detail: plain(detail) };
    (this.sink ?? current ?? standard)[at]({ component, ...this.fields, ...extra }, message);
  }
}

/** The root handle: records without ids, to the logger set with `setLogger` (else the default). */
export const log: Log = new FieldLog({}, undefined);

/** A root handle writing to `logger` whatever `setLogger` says (a node given its own logger). */
export function logTo(logger: Logger): Log {
  return new FieldLog({}, logger);
}

/** Bigints become strings (JSON has none); everything else is left to the logger's serializer. */
function plain(detail: unknown): unknown {
  if (typeof detail === 'bigint') return detail.toString();
  if (typeof detail !== 'object' || detail === null) return detail;
  try {
    return JSON.parse(JSON.stringify(detail, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))) as unknown;
  } catch {
    return String(detail); // a cycle: a log line must not throw
  }
}

const ID_FIELDS = ['job', 'node', 'task'] as const;

/** One JSON record of the default logger as a text line: `TIME LEVEL [component] message job=… node=… task=… detail`. */
function textLine(line: string): string {
  const r = JSON.parse(line) as { time: string; level: string; component?: string; message?: string; error?: string; detail?: unknown } & Record<string, unknown>;
  const ids = ID_FIELDS.filter((k) => typeof r[k] === 'string').map((k) => ` ${k}=${r[k] as string}`).join('');
  const suffix = r.error !== undefined ? ` ${r.error}` : r.detail === undefined ? '' : ` ${JSON.stringify(r.detail)}`;
  return `${r.time} ${r.level.toUpperCase().padEnd(5)} [${r.component ?? ''}] ${r.message ?? ''}${ids}${suffix}\n`;
}
