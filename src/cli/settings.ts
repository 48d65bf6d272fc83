import { accessSync, constants, statSync } from 'node:fs';
import { LOG_LEVELS } from '../util/log.js';
import { UsageError } from './errors.js';
import { nonNegativeInt, port, positiveInt, zookeeperConnectionString } from './options.js';

/**
 * Settings: the command-line options that may also come from the environment (`TIDEPOOL_<NAME>`)
 * or from a configuration file (`--config`). A setting is named by its option's attribute name
 * as commander knows it (`--secret-file` → `secretFile`, `--no-prune` → `prune`).
 */

export type SettingKind = 'positiveInt' | 'nonNegativeInt' | 'seconds' | 'port' | 'logLevel' | 'logFormat' | 'zk' | 'file' | 'string' | 'boolean';

/**
 * What each setting holds; a setting missing here takes any single value (checked by the command itself).
 * A setting that can also be switched on or off (`--dashboard [port]`, `--no-dashboard`) takes true/false too.
 */
export const SETTING_KINDS: Readonly<Record<string, SettingKind>> = {
  zk: 'zk',
  workers: 'positiveInt',
  nodes: 'nonNegativeInt',
  add: 'nonNegativeInt',
  depth: 'positiveInt',
  timeout: 'positiveInt',
  interval: 'positiveInt',
  scaleOut: 'seconds',
  scaleIn: 'seconds',
  port: 'port',
  metricsPort: 'port',
  dashboard: 'port',
  host: 'string',
  id: 'string',
  scale: 'string',
  secretFile: 'file',
  instance: 'file',
  logLevel: 'logLevel',
  logFormat: 'logFormat',
  prune: 'boolean',
};

/** The kinds in words, for documentation and help. */
export const KIND_DESCRIPTIONS: Readonly<Record<SettingKind, string>> = {
  positiveInt: 'whole number ≥ 1',
  nonNegativeInt: 'whole number ≥ 0',
  seconds: 'number of seconds ≥ 0',
  port: 'port number 0–65535',
  logLevel: LOG_LEVELS.join(' | '),
  logFormat: 'text | json',
  zk: 'zk://host:port[,host:port…][/chroot]',
  file: 'path of a readable file (relative to the configuration file when given there)',
  string: 'text',
  boolean: 'true | false',
};

export const LOG_FORMATS = ['text', 'json'] as const;

/** Options that are never settings: they only make sense on the command line. */
export const COMMAND_LINE_ONLY: ReadonlySet<string> = new Set(['help', 'version', 'json']);

/** The option naming the configuration file: it comes from the command line or the environment, never from a file. */
export const CONFIG_SETTING = 'config';

export const ENV_PREFIX = 'TIDEPOOL_';

/** Older environment variables still honoured, after the regular `TIDEPOOL_<NAME>` one. */
export const ENV_ALIASES: Readonly<Record<string, readonly string[]>> = {
  logLevel: ['TIDEPOOL_LOG'],
};

/** `secretFile` → `TIDEPOOL_SECRET_FILE`. */
export function envVarName(setting: string): string {
  return ENV_PREFIX + setting.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export function settingKind(setting: string): SettingKind | undefined {
  return Object.hasOwn(SETTING_KINDS, setting) ? SETTING_KINDS[setting] : undefined;
}

const TRUE = new Set(['true', 'yes', 'on', '1']);
const FALSE = new Set(['false', 'no', 'off', '0']);

/** A boolean setting: YAML true/false, or (from the environment) true/false, yes/no, on/off, 1/0. */
export function parseBoolean(value: unknown, label: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  if (text !== undefined && TRUE.has(text)) return true;
  if (text !== undefined && FALSE.has(text)) return false;
  throw new UsageError(`${label}: "${String(value)}" is not true or false`);
}

/**
 * Checks the text of a setting of `kind` and returns it unchanged (the command parses it again, as it
 * does its flags). Errors start with `label`: `FILE:LINE: KEY` or the environment variable's name.
 * A `file` is only checked to be non-empty here; `readableFile` checks it once it is used.
 */
export function checkSetting(kind: SettingKind | undefined, value: string, label: string): string {
  if (value.trim() === '') throw new UsageError(`${label}: no value given`);
  switch (kind) {
    case 'positiveInt': positiveInt(value, label); break;
    case 'nonNegativeInt': nonNegativeInt(value, label); break;
    case 'seconds': if (!Number.isFinite(Number(value)) || Number(value) < 0) throw new UsageError(`${label}: "${value}" is not a number of seconds ≥ 0`); break;
    case 'port': port(value, label); break;
    case 'zk': zookeeperConnectionString(value, label); break;
    case 'logLevel': oneOf(value, LOG_LEVELS, label); break;
    case 'logFormat': oneOf(value, LOG_FORMATS, label); break;
    case 'boolean': parseBoolean(value, label); break;
    case 'file': case 'string': case undefined: break;
  }
  return value;
}

/** Checks that `file` can be read. */
export function readableFile(file: string, label: string): string {
  try {
    if (statSync(file).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    accessSync(file, constants.R_OK);
  } catch (err) {
    throw new UsageError(`${label}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return file;
}

function oneOf(value: string, allowed: readonly string[], label: string): void {
  if (!allowed.includes(value)) throw new UsageError(`${label}: "${value}" is not one of ${allowed.join(', ')}`);
}
