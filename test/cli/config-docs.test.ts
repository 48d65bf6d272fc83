/**
 * docs/configuration.md is generated from the settings schemas (scripts/config-docs.ts): the committed
 * page must be what the generator writes now, so it cannot go stale. And the settings' names are
 * unambiguous: no two settings share an environment variable unless they are one common setting.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CONFIG_DOC, configurationDoc } from '../../scripts/config-docs.js';
import { allCommands, buildProgram } from '../../src/cli/main.js';
import { settingsOf } from '../../src/cli/settings/command-schema.js';
import { COMMON } from '../../src/cli/settings/kinds.js';
import { commandPath, envVarName } from '../../src/cli/settings/settings-command.js';

test('docs/configuration.md is what `npm run docs:config` writes from the schemas', () => {
  assert.ok(readFileSync(CONFIG_DOC, 'utf8') === configurationDoc(), 'docs/configuration.md is stale: run `npm run docs:config` and commit it');
});

test('each environment variable names one setting: a common one, or one command\'s own', () => {
  const owners = new Map<string, string>();
  for (const command of allCommands(buildProgram())) {
    for (const { key, kind } of settingsOf(command)) {
      const name = envVarName(command, key);
      const owner = Object.hasOwn(COMMON, key) ? `common ${key}` : `${commandPath(command).join(' ')} ${key}`;
      assert.equal(owners.get(name) ?? owner, owner, `${name} would be read by ${owners.get(name)} and ${owner}`);
      owners.set(name, owner);
      if (Object.hasOwn(COMMON, key)) assert.equal(kind, COMMON[key]!.kind, `${commandPath(command).join(' ')} --${key} takes the common kind`);
    }
  }
});
