/**
 * The kinds of values a setting takes. Each is a JSON Schema fragment (what ajv checks, after it has
 * coerced text from the command line or the environment to the schema's type), the same in words (for
 * errors and docs/configuration.md), and optionally how the checked value becomes what the command
 * uses (milliseconds for a duration, a parsed plan, a path relative to the configuration file).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONNECTION_STRING_HELP, parseConnectionString } from '../../coord/connection-string.js';
import { LOG_LEVELS } from '../../util/log.js';
import { DURATION_HELP, formatDuration, parseDuration, parseLegacyDuration, type DurationUnit } from './durations.js';
import { parsePlan, PLAN_HELP, type PlanClock } from './scale-plan.js';

export type JsonSchema = Record<string, unknown>;

/** Where a value came from, for what decoding needs to know. */
export interface DecodeContext {
  /** How errors name the value: `--workers`, `TIDEPOOL_NODE_WORKERS`, `tidepool.yaml:3: workers`. */
  label: string;
  /** The configuration file's directory when the value came from one (relative paths start there). */
  baseDir?: string;
  /** Reports an old form that still works for one release. */
  deprecated(note: string): void;
}

export interface ValueKind {
  readonly schema: JsonSchema;
  /** The value in words, after "is not": `a whole number ≥ 1`. */
  readonly what: string;
  /** Text as the environment may spell it → what the schema takes (`yes` → true for a switch). */
  readonly prepare?: (value: unknown) => unknown;
  /** Why a value of a format was refused (the parser's own words), when there is more to say than `what`. */
  readonly explain?: (text: string) => string | undefined;
  /** The checked value as the command uses it; throws Error for what the schema cannot express. */
  readonly decode?: (value: unknown, ctx: DecodeContext) => unknown;
}

/** ajv formats the kinds use: name → does this text have the format. */
export const FORMATS: Record<string, (text: string) => boolean> = {
  duration: (s) => parseDuration(s) !== undefined,
  'duration-or-number': (s) => parseDuration(s) !== undefined || /^\s*\d+(\.\d+)?\s*$/.test(s),
  zk: (s) => explainZk(s) === undefined,
  'time-plan': (s) => explainPlan(s, 'time') === undefined,
  'iteration-plan': (s) => explainPlan(s, 'iteration') === undefined,
};

const TRUE = new Set(['true', 'yes', 'on', '1']);
const FALSE = new Set(['false', 'no', 'off', '0']);

/** Text for a switch as the environment may spell it (true/false, yes/no, on/off, 1/0) → a boolean; anything else unchanged. */
function normalizeBoolean(value: unknown, words = [TRUE, FALSE]): unknown {
  if (typeof value !== 'string') return value;
  const text = value.trim().toLowerCase();
  return words[0]!.has(text) ? true : words[1]!.has(text) ? false : value;
}

const WORDS = [new Set(['true', 'yes', 'on']), new Set(['false', 'no', 'off'])];

/** `host:port[,host:port…][/chroot]`, with or without `zk://`, → the zk:// form; undefined when refused. */
export function normalizeZk(text: string): string | undefined {
  const s = text.trim();
  if (s === '' || s === 'embedded' || s.startsWith('embedded:')) return undefined;
  const conn = s.startsWith('zk://') ? s : `zk://${s}`;
  try {
    return parseConnectionString(conn).backend === 'zookeeper' ? conn : undefined;
  } catch {
    return undefined;
  }
}

export const ZK_HELP = 'host:port[,host:port…][/chroot], with or without zk://';

function explainZk(text: string): string | undefined {
  const s = text.trim();
  if (s === 'embedded' || s.startsWith('embedded:')) return `"${s}" is the in-process backend; give a ZooKeeper ensemble (${ZK_HELP})`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) && !s.startsWith('zk://')) return `bad connection string "${s}": only zk:// (a ZooKeeper ensemble) is supported, ${ZK_HELP}`;
  try {
    parseConnectionString(s.startsWith('zk://') ? s : `zk://${s}`);
    return undefined;
  } catch (err) {
    return (err as Error).message.replace(CONNECTION_STRING_HELP, ZK_HELP);
  }
}

function explainPlan(text: string, clock: PlanClock): string | undefined {
  try {
    parsePlan(text, clock);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const integer = (minimum: number, maximum?: number): JsonSchema => ({ type: 'integer', minimum, ...(maximum !== undefined ? { maximum } : {}) });

export const kinds = {
  /** An on/off switch (`--json`, `--no-prune`). */
  switch: { schema: { type: 'boolean' }, what: 'true or false', prepare: (v) => normalizeBoolean(v) },
  text: { schema: { type: 'string', minLength: 1 }, what: 'some text' },
  positiveInt: { schema: integer(1), what: 'a positive whole number' },
  count: { schema: integer(0), what: 'a whole number ≥ 0' },
  port: { schema: integer(0, 65535), what: 'a port number (0–65535)' },
  /** `--dashboard [port]`: on (a default port), off, or a port. */
  optionalPort: { schema: { type: ['boolean', 'integer'], minimum: 0, maximum: 65535 }, what: 'a port number (0–65535), or true or false' },
  /** `--progress [every]`: on, off, or on with plain lines at most this often. */
  optionalDuration: {
    schema: { type: ['boolean', 'string'], format: 'duration' }, what: `true or false, or ${DURATION_HELP}`,
    prepare: (v) => normalizeBoolean(v, WORDS),
    decode: (value) => parseDuration(value as string),
  },
  /** A real number ≥ 0 (a scale factor). */
  factor: { schema: { type: 'number', minimum: 0 }, what: 'a number ≥ 0' },
  zk: {
    schema: { type: 'string', format: 'zk' }, what: `a ZooKeeper ensemble, ${ZK_HELP}`, explain: explainZk,
    decode: (value) => normalizeZk(value as string),
  },
  /** A file the command reads; relative to the configuration file when given there; checked to be readable. */
  file: {
    schema: { type: 'string', minLength: 1 }, what: 'the path of a readable file',
    decode: (value, ctx) => readableFile(ctx.baseDir === undefined ? (value as string) : resolve(ctx.baseDir, value as string)),
  },
  /** A directory or a path to write; relative to the configuration file when given there. */
  path: {
    schema: { type: 'string', minLength: 1 }, what: 'a path',
    decode: (value, ctx) => (ctx.baseDir === undefined ? value : resolve(ctx.baseDir, value as string)),
  },
  /** Several values (`--package a b`); one value from the environment or a file is a list of one. */
  list: { schema: { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1 }, what: 'one or more values' },
  logLevel: oneOf(LOG_LEVELS),
  logFormat: oneOf(['text', 'json']),
  duration: duration(),
  timePlan: plan('time'),
  iterationPlan: plan('iteration'),
} satisfies Record<string, ValueKind>;

/** One of `values`. */
export function oneOf(values: readonly string[]): ValueKind {
  return { schema: { type: 'string', enum: [...values] }, what: `one of ${values.join(', ')}` };
}

/**
 * A duration in ms; with `legacyUnit`, a bare number still means that unit for one release (with a
 * note); `positive`: zero is refused (an interval).
 */
export function duration(legacyUnit?: DurationUnit, positive = false): ValueKind {
  return {
    schema: { type: 'string', format: legacyUnit ? 'duration-or-number' : 'duration' },
    what: positive ? `${DURATION_HELP}, more than 0` : DURATION_HELP,
    explain: (text) => (/^\s*\d+(\.\d+)?\s*$/.test(text) && text.trim() !== '0' ? `"${text.trim()}" has no unit: ${DURATION_HELP}` : undefined),
    decode: (value, ctx) => {
      const text = value as string;
      let ms = parseDuration(text);
      if (ms === undefined && legacyUnit) {
        ms = parseLegacyDuration(text, legacyUnit)!;
        ctx.deprecated(`${ctx.label} ${text.trim()}: a number without a unit (${legacyUnit}) is the old form; write ${formatDuration(ms)}`);
      }
      if (positive && ms === 0) throw new Error(`"${text.trim()}" is not more than 0`);
      return ms;
    },
  };
}

function plan(clock: PlanClock): ValueKind {
  return {
    schema: { type: 'string', format: `${clock}-plan` }, what: `a scale plan, ${PLAN_HELP[clock]}`,
    explain: (text) => explainPlan(text, clock),
    decode: (value) => parsePlan(value as string, clock),
  };
}

/** Checks that `file` can be read; returns it. */
export function readableFile(file: string): string {
  try {
    if (statSync(file).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    accessSync(file, constants.R_OK);
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return file;
}

/**
 * Settings every command that has them shares, under one name: at the top of a configuration file
 * and as `TIDEPOOL_<NAME>` in the environment. Every other setting belongs to one command
 * (`TIDEPOOL_SOLVE_PRUNE`, `solve: { prune: false }`): a value meant for one command never reaches
 * another that happens to use the same word for something else.
 */
export const COMMON: Readonly<Record<string, { kind: ValueKind; what: string }>> = {
  zk: { kind: kinds.zk, what: 'the ZooKeeper ensemble of the cluster' },
  timeout: { kind: duration('ms'), what: 'how long to wait for ZooKeeper to answer' },
  secretFile: { kind: kinds.file, what: 'the file holding the cluster secret (one a line while rotating) or a monitor credential (security.md)' },
  logLevel: { kind: kinds.logLevel, what: 'how much to log' },
  logFormat: { kind: kinds.logFormat, what: 'log line format (json: one JSON object per line)' },
};

/** How long commands wait for ZooKeeper by default. */
export const DEFAULT_TIMEOUT = '5s';
