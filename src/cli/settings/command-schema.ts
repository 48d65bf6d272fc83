/**
 * Each command's settings as one JSON Schema (an object of its settings, nothing else allowed), which
 * ajv checks — whatever the values came from: flags, the environment, a configuration file's section
 * or the options' defaults. docs/configuration.md is generated from the same schemas.
 */
import type { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import type AjvClass from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { UsageError } from '../errors.js';
import { COMMON, FORMATS, type JsonSchema, type ValueKind } from './kinds.js';
import { COMMAND_LINE_ONLY, CONFIG_SETTING, SettingsCommand, isDeprecatedFlag, optionKind } from './settings-command.js';

const require = createRequire(import.meta.url);

/** One setting of a command: the options that set it (`--dashboard [port]` and `--no-dashboard`), and its kind. */
export interface Setting {
  command: Command;
  key: string;
  options: Option[];
  kind: ValueKind;
}

/** The settings of `command` (its own options, grouped by attribute), without command-line-only options. */
export function settingsOf(command: Command): Setting[] {
  const byKey = new Map<string, Option[]>();
  for (const option of command.options) {
    const key = option.attributeName();
    if (COMMAND_LINE_ONLY.has(key) || key === CONFIG_SETTING || isDeprecatedFlag(command, option)) continue;
    byKey.set(key, [...(byKey.get(key) ?? []), option]);
  }
  return [...byKey].map(([key, options]) => ({
    command, key, options,
    kind: optionKind(options.find((o) => o.required || o.optional) ?? options[0]!),
  }));
}

/** The JSON Schema of `command`'s settings. */
export function commandSchema(command: Command): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const { key, options, kind } of settingsOf(command)) {
    const main = options.find((o) => !o.negate) ?? options[0]!;
    properties[key] = { ...kind.schema, description: main.description };
  }
  const required = command instanceof SettingsCommand ? [...command.requiredSettings.keys()] : [];
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

let ajv: AjvClass.default | undefined;
const validators = new WeakMap<object, ValidateFunction>();

function validatorFor(owner: object, schema: () => JsonSchema): ValidateFunction {
  let validate = validators.get(owner);
  if (!validate) {
    if (!ajv) {
      // ajv is CommonJS; its default export differs between module systems, so take the constructor directly.
      const Ajv = require('ajv') as typeof AjvClass.default;
      ajv = new Ajv({ coerceTypes: 'array', allErrors: true, allowUnionTypes: true });
      for (const [name, test] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: test });
    }
    validate = ajv.compile(schema());
    validators.set(owner, validate);
  }
  return validate;
}

/** The schema of the common settings (COMMON), as they appear at the top of a configuration file. */
export function commonSchema(): JsonSchema {
  const properties = Object.fromEntries(Object.entries(COMMON).map(([key, c]) => [key, { ...c.kind.schema, description: c.what }]));
  return { type: 'object', properties, additionalProperties: false };
}

/**
 * Checks `values` (setting → value as given) against `command`'s schema and converts them in place to
 * the schema's types ("4" → 4). A refusal is a UsageError that starts with the value's label (`labelOf`).
 * `partial`: a part of the settings (a section of a configuration file): required ones may be missing.
 */
export function checkSettings(command: Command, values: Record<string, unknown>, labelOf: (key: string) => string, partial = false): void {
  const described = new Map(settingsOf(command).map((s) => [s.key, { kind: s.kind, options: s.options }]));
  check(validatorFor(command, () => commandSchema(command)), values, described, labelOf, partial, command);
}

/** Checks common settings given outside any command's section. */
export function checkCommonSettings(values: Record<string, unknown>, labelOf: (key: string) => string): void {
  const described = new Map(Object.entries(COMMON).map(([key, c]) => [key, { kind: c.kind, options: [] as Option[] }]));
  check(validatorFor(COMMON, commonSchema), values, described, labelOf, true);
}

/**
 * Checks one value of `kind` that is not a setting (a positional argument such as NODES), the same
 * way settings are checked; returns it converted (and decoded). Errors start with `label`.
 */
export function checkValue(kind: ValueKind, raw: unknown, label: string): unknown {
  const values: Record<string, unknown> = { value: kind.prepare?.(raw) ?? raw };
  const schema = () => ({ type: 'object', properties: { value: kind.schema } });
  check(validatorFor(kind, schema), values, new Map([['value', { kind, options: [] }]]), () => label, false);
  if (!kind.decode) return values.value;
  try {
    return kind.decode(values.value, { label, deprecated: () => undefined });
  } catch (err) {
    throw new UsageError(`${label}: ${(err as Error).message}`);
  }
}

interface Described {
  kind: ValueKind;
  options: Option[];
}

function check(validate: ValidateFunction, values: Record<string, unknown>, described: Map<string, Described>, labelOf: (key: string) => string, partial: boolean, command?: Command): void {
  const given = { ...values };
  if (validate(values)) return;
  const errors = (validate.errors ?? []).filter((e) => !(partial && e.keyword === 'required'));
  const error = errors.find((e) => e.instancePath !== '') ?? errors[0];
  if (error) throw new UsageError(describeError(error, given, described, labelOf, command));
}

function describeError(error: ErrorObject, given: Record<string, unknown>, described: Map<string, Described>, labelOf: (key: string) => string, command?: Command): string {
  if (error.keyword === 'required') {
    const key = (error.params as { missingProperty: string }).missingProperty;
    const options = described.get(key)?.options ?? [];
    const flag = options.find((o) => !o.negate)?.long ?? key;
    const env = options.find((o) => o.envVar)?.envVar;
    const why = command instanceof SettingsCommand ? command.requiredSettings.get(key) : undefined;
    return `${flag} is required${env ? ` (or ${env})` : ''}${why ? `: ${why}` : ''}`;
  }
  if (error.keyword === 'additionalProperties') {
    const key = (error.params as { additionalProperty: string }).additionalProperty;
    return `${labelOf(key)}: not a setting${command ? ` of ${command.name()}` : ''}`;
  }
  const key = error.instancePath.split('/')[1] ?? '';
  const raw = given[key];
  const text = Array.isArray(raw) ? raw.join(' ') : String(raw);
  const kind = described.get(key)?.kind;
  const explained = typeof raw === 'string' ? kind?.explain?.(raw) : undefined;
  return `${labelOf(key)}: ${explained ?? `"${text}" is not ${kind?.what ?? 'allowed'}`}`;
}
