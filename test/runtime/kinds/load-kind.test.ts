/**
 * Which code a node runs for a job's kind: tidepool's own kinds by their built-in names (the node's
 * copy, whatever install or machine the submitter had), others from their module.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ITERATIVE_KIND } from '../../../src/frameworks/iterative/run-iterative.js';
import iterativeKind from '../../../src/frameworks/iterative/iterative-kind.js';
import { MALLEABLE_KIND, malleableKind } from '../../../src/frameworks/malleable/malleable-kind.js';
import { WORKFLOW_KIND } from '../../../src/frameworks/workflow/run-workflow.js';
import workflowKind from '../../../src/frameworks/workflow/workflow-kind.js';
import { loadJobKind } from '../../../src/runtime/kinds/kind-registry.js';
import { TASK_POOL_KIND, taskPoolKind } from '../../../src/runtime/pool/task-pool-kind.js';

test('the frameworks name their kinds as built in, and a node loads its own copy of each', async () => {
  const kinds = [[TASK_POOL_KIND, taskPoolKind], [ITERATIVE_KIND, iterativeKind], [MALLEABLE_KIND, malleableKind], [WORKFLOW_KIND, workflowKind]] as const;
  for (const [ref, own] of kinds) {
    assert.match(ref.module, /^builtin:/, `${ref.module} names no file of the submitter's install`);
    assert.equal(await loadJobKind(ref), own, `${ref.module}: the very object this process has`);
  }
  assert.equal(await loadJobKind(undefined), taskPoolKind, 'no kind: the task pool');
});

test('a kind from a module still loads by URL; an unknown built-in name or a non-kind export is refused by name', async () => {
  const probe = new URL('../apps/probe-kind.ts', import.meta.url).href;
  assert.equal((await loadJobKind({ module: probe, export: 'default' })).name, 'probe');
  await assert.rejects(loadJobKind({ module: 'builtin:nonesuch', export: 'default' }), /unknown built-in job kind "builtin:nonesuch" \(known: builtin:task-pool, builtin:iterative, builtin:malleable, builtin:workflow\)/);
  await assert.rejects(loadJobKind({ module: 'builtin:iterative', export: 'nope' }), /builtin:iterative has no job kind export "nope"/);
});
