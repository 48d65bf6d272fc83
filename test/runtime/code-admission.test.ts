/**
 * Code admission's rules, one by one (the end-to-end cases are in cluster-security*.test.ts): which
 * module specifiers a node admits, and which specs (signature, id, shipped code).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { builtinModule, builtinNames, resolveModule } from '../../src/runtime/worker/builtin-code.js';
import { CodeAdmission, CodeRefused } from '../../src/runtime/job/code-admission.js';
import '../../src/frameworks/builtin-kinds.js';
import { loadMalleableApp } from '../../src/frameworks/malleable/malleable-app.js';
import { loadJobKind } from '../../src/runtime/kinds/kind-registry.js';
import { signSpec, specSignatureValid } from '../../src/runtime/job/job-signature.js';
import type { JobSpec } from '../../src/runtime/job/job-spec.js';
import { loadTaskType } from '../../src/runtime/worker/task.js';
import { ClusterSecret } from '../../src/util/cluster-secret.js';

const secret = ClusterSecret.random();
const base = mkdtempSync(join(os.tmpdir(), 'tp-admission-'));
const install = join(base, 'install');
const apps = join(base, 'apps');
for (const d of [install, apps, join(base, 'other')]) mkdirSync(d);
for (const f of [join(install, 'task.js'), join(apps, 'task.js'), join(base, 'other', 'task.js')]) writeFileSync(f, '');
symlinkSync(join(base, 'other'), join(install, 'link-out'));
const url = (p: string) => pathToFileURL(p).href;

function refusedBy(run: () => void, rule: RegExp): void {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof CodeRefused, String(err));
    assert.match(err.message, rule);
    return true;
  });
}

describe('code admission: modules', () => {
  const admission = new CodeAdmission({ secret, installation: install, allow: [url(apps), 'https://code.example/tasks.js'] });
  const admit = (m: string) => admission.admitModule(m, 'task module');

  it('admits built-in names, files of the installation, allow-listed locations and installed packages', () => {
    for (const name of builtinNames()) admit(name);
    admit(url(join(install, 'task.js')));
    admit(join(install, 'task.js'));
    admit(url(join(apps, 'task.js')));
    admit('https://code.example/tasks.js');
    admit('my-app/tasks');
    admit('@scope/app');
  });

  it('admits a file an embedded cluster\'s own client submitted, by its exact URL only (live: what it submits later too)', () => {
    const submitted = new Set<string>();
    const inProcess = new CodeAdmission({ secret, installation: install, submittedHere: submitted });
    const mine = url(join(base, 'other', 'task.js'));
    refusedBy(() => inProcess.admitModule(mine, 'task module'), /refused: a file outside this node's installation/);
    submitted.add(mine);
    inProcess.admitModule(mine, 'task module');
    refusedBy(() => inProcess.admitModule(url(join(base, 'other', 'else.js')), 'task module'), /refused: a file outside this node's installation/);
    refusedBy(() => inProcess.admitModule(join(base, 'other', 'task.js'), 'task module'), /refused: a file outside this node's installation/);
    submitted.add('data:text/javascript,export default 1');
    refusedBy(() => inProcess.admitModule('data:text/javascript,export default 1', 'task module'), /refused: data: URLs are code written into the job spec itself/);
  });

  it('refuses data:, the network, files outside (links resolved), relative and node: specifiers, unknown built-ins; naming the module and the rule', () => {
    refusedBy(() => admit('data:text/javascript,export default 1'), /^task module data:text\/javascript,export default 1 refused: data: URLs are code written into the job spec itself/);
    refusedBy(() => admit('https://evil.example/x.js'), /refused: code from the network runs only from a location the operator allows \(--allow-code https:\/\/evil\.example\/\)/);
    refusedBy(() => admit(url(join(base, 'other', 'task.js'))), new RegExp(`refused: a file outside this node's installation \\(${install}\\) runs only from a location the operator allows \\(--allow-code ${url(join(base, 'other'))}/\\)`));
    refusedBy(() => admit(url(join(install, 'link-out', 'task.js'))), /refused: a file outside this node's installation/);
    refusedBy(() => admit(url(join(install, '..', 'other', 'task.js'))), /refused: a file outside this node's installation/);
    refusedBy(() => admit(`${url(apps)}-sibling/task.js`), /refused: a file outside/);
    refusedBy(() => admit('./task.js'), /refused: a relative specifier names no file a node can find/);
    refusedBy(() => admit('node:child_process'), /refused: Node's built-in modules hold no task type or job kind/);
    refusedBy(() => admit('ftp://x/y.js'), /refused: ftp: modules run only from a location the operator allows/);
    refusedBy(() => admit('builtin:nonesuch'), /refused: no built-in module has that name \(known: builtin:task-pool, builtin:iterative/);
  });

  it('every built-in name resolves to a module of this installation that exports what it names', async () => {
    for (const name of builtinNames().filter((n) => n !== 'builtin:task-pool')) {
      assert.match(builtinModule(name)!, /^file:\/\/.*\/src\/frameworks\/.*\.(ts|js)$/, name);
      assert.equal(resolveModule(name), builtinModule(name));
    }
    for (const kind of ['builtin:iterative', 'builtin:malleable', 'builtin:workflow', 'builtin:service-kind']) {
      assert.equal((await loadJobKind({ module: kind, export: kind === 'builtin:malleable' ? 'malleableKind' : 'default' })).kind, 'tidepool.job-kind', kind);
    }
    for (const app of ['builtin:stencil', 'builtin:wave', 'builtin:leanmd', 'builtin:lulesh']) {
      assert.equal(typeof (await loadMalleableApp({ module: app, export: 'default' })).name, 'string', app);
    }
    for (const task of ['builtin:tsp', 'builtin:nqueens', 'builtin:clique', 'builtin:knapsack', 'builtin:slab', 'builtin:option', 'builtin:workflow-task', 'builtin:service-task']) {
      assert.equal((await loadTaskType({ module: task, export: 'default' })).kind, 'tidepool.task', task);
    }
  });
});

describe('code admission: specs', () => {
  const admission = new CodeAdmission({ secret, installation: install });
  const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
    id: 'j-1', kind: { module: 'builtin:task-pool', export: 'taskPoolKind' }, kindSpec: { ref: { module: 'builtin:tsp', export: 'default' }, varNames: ['bound'] },
    createdAt: 1, label: 'builtin:tsp', nodes: { requested: 2, min: 0 },
    input: { cities: new Map([[1, [0, 1]]]), raw: Buffer.from([9, 8]) }, ...over,
  });

  it('admits a signed spec, whatever the order of its fields; refuses an unsigned one, a changed one, one under another id', () => {
    const signed = signSpec(spec(), secret);
    admission.admitJob(signed, 'j-1');
    const reordered = Object.fromEntries(Object.entries(signed).reverse()) as unknown as JobSpec;
    admission.admitJob(reordered, 'j-1');
    refusedBy(() => admission.admitJob(spec(), 'j-1'), /^the spec of job j-1 refused: it carries no HMAC by the cluster secret/);
    for (const changed of [{ nodes: { requested: 3, min: 0 } }, { input: { cities: new Map([[1, [0, 2]]]), raw: Buffer.from([9, 8]) } }, { kindSpec: { ref: { module: 'builtin:clique', export: 'default' }, varNames: ['bound'] } }, { label: 'other' }, { kind: { module: 'builtin:iterative', export: 'default' } }]) {
      refusedBy(() => admission.admitJob({ ...signed, ...changed }, 'j-1'), /refused: its HMAC does not verify with the cluster secret/);
    }
    refusedBy(() => admission.admitJob(signed, 'j-2'), /^the spec of job j-1 refused: it is stored as job j-2/);
    refusedBy(() => admission.admitJob(signSpec(spec(), ClusterSecret.random()), 'j-1'), /does not verify/);
  });

  it('shipped code: its hash is covered; the module rule applies to the kind, not to the submitter\'s path', () => {
    const module = 'file:///opt/elsewhere/task.js';
    const shipped = signSpec(spec({ kindSpec: { ref: { module, export: 'default' }, varNames: [] }, code: { module, bundle: { hash: 'b'.repeat(64), size: 10 } } }), secret);
    admission.admitJob(shipped, 'j-1');
    assert.equal(specSignatureValid(shipped, secret), true);
    // The kind's module check: the shipped module is admitted (it comes from the signed bundle), another file of that directory is not.
    admission.admitJobModule(shipped, module, 'task module');
    refusedBy(() => admission.admitJobModule(shipped, 'file:///opt/elsewhere/other.js', 'task module'), /^task module file:\/\/\/opt\/elsewhere\/other\.js refused: a file outside this node's installation/);
    refusedBy(() => admission.admitJob({ ...shipped, code: { module, bundle: { hash: 'c'.repeat(64), size: 10 } } }, 'j-1'),
      /^task module file:\/\/\/opt\/elsewhere\/task\.js \(shipped, cccccccccccc…\) refused: shipped code runs only when its spec carries an HMAC/);
    refusedBy(() => admission.admitJob(signSpec({ ...shipped, kind: { module: 'data:text/javascript,1', export: 'default' } }, secret), 'j-1'), /^job kind data:text\/javascript,1 refused: data: URLs/);
  });

  it('rotation: a spec signed with the old secret is admitted by a node holding both, not by one holding only the new', () => {
    const next = ClusterSecret.random();
    const old = signSpec(spec(), secret);
    new CodeAdmission({ secret: ClusterSecret.parse(`${next.current.toString()}\n${secret.current.toString()}`, 'f'), installation: install }).admitJob(old, 'j-1');
    refusedBy(() => new CodeAdmission({ secret: next, installation: install }).admitJob(old, 'j-1'), /does not verify/);
  });
});
