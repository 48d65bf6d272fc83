/**
 * Which code a node runs for a job's kind: tidepool's own kinds by their built-in names (the node's
 * copy, whatever install or machine the submitter had), others from their module.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ITERATIVE_KIND } from '../../../src/frameworks/iterative/iterative-kind-ref.js';
import iterativeKind from '../../../src/frameworks/iterative/iterative-kind.js';
import { MALLEABLE_KIND } from '../../../src/frameworks/malleable/malleable-kind-ref.js';
import { malleableKind } from '../../../src/frameworks/malleable/malleable-kind.js';
import { WORKFLOW_KIND } from '../../../src/frameworks/workflow/workflow-kind-ref.js';
import workflowKind from '../../../src/frameworks/workflow/workflow-kind.js';
import { loadJobKind, registerJobKind } from '../../../src/runtime/kinds/kind-registry.js';
import { taskPoolKind } from '../../../src/runtime/pool/task-pool-kind.js';
import { TASK_POOL_KIND } from '../../../src/runtime/pool/task-pool-ref.js';

test('the built-in kinds are named as built in, registered by their references, and a node loads its own copy of each', async () => {
  const kinds = [[TASK_POOL_KIND, taskPoolKind], [ITERATIVE_KIND, iterativeKind], [MALLEABLE_KIND, malleableKind], [WORKFLOW_KIND, workflowKind]] as const;
  for (const [ref, own] of kinds) {
    assert.match(ref.module, /^builtin:/, `${ref.module} names no file of the submitter's install`);
    assert.equal(await loadJobKind(ref), own, `${ref.module}: the very object this process has`);
  }
});

test('a kind from a module still loads by URL; an unknown built-in name or a non-kind export is refused by name', async () => {
  const probe = new URL('../apps/probe-kind.ts', import.meta.url).href;
  assert.equal((await loadJobKind({ module: probe, export: 'default' })).name, 'probe');
  await assert.rejects(loadJobKind({ module: 'builtin:nonesuch', export: 'default' }), /unknown built-in job kind "builtin:nonesuch" \(this process knows builtin:iterative, builtin:malleable, builtin:task-pool, builtin:workflow; /);
  await assert.rejects(loadJobKind({ module: 'builtin:iterative', export: 'nope' }), /builtin:iterative has no job kind export "nope"/);
});

test('only a "builtin:" name is registered', () => {
  assert.throws(() => registerJobKind('file:///kind.js', () => Promise.resolve({})), /a registered job kind has a "builtin:" name, got "file:\/\/\/kind.js"/);
});
