// Service tenants: several tokens with names and quotas (concurrent batches, tasks per batch, bytes per
// request, CPU seconds per minute). A request over its tenant's quota gets 429 and the reason before it
// reaches the cluster, so it takes nothing from the other tenants, whose batches run meanwhile; each
// tenant's batches and refusals are logged under its name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Distribution, ServiceTenants } from '../../../src/frameworks/service/index.js';
import { setLogger } from '../../../src/util/log.js';
import { startHttpsService } from './https-service.js';

const A = { name: 'analytics', token: 'analytics-token-0123456789' };
const B = { name: 'billing', token: 'billing-token-0123456789ab' };

test('a tenants file: tokens inline or from files, quotas checked, mistakes named', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'tidepool-tenants-'));
  try {
    writeFileSync(path.join(dir, 'b.token'), `${B.token}\n`);
    const file = path.join(dir, 'tenants.yaml');
    writeFileSync(file, `tenants:\n  - name: ${A.name}\n    token: ${A.token}\n    quotas: { concurrentBatches: 1, cpuSecondsPerMinute: 30 }\n  - name: ${B.name}\n    tokenFile: b.token\n`);
    const specs = ServiceTenants.readFile(file);
    assert.deepEqual(specs, [{ name: A.name, token: A.token, quotas: { concurrentBatches: 1, cpuSecondsPerMinute: 30 } }, { name: B.name, token: B.token }]);
    const tenants = new ServiceTenants(specs);
    assert.equal(tenants.authenticate(`Bearer ${B.token}`)?.name, B.name);
    assert.equal(tenants.authenticate(`Bearer ${B.token}x`), undefined);
    assert.equal(tenants.authenticate(B.token), undefined);
    const bad: [string, RegExp][] = [
      [`tenants:\n  - name: x\n    token: short\n`, /tenant x: its token needs at least 16 characters/],
      [`tenants:\n  - name: x\n    token: ${A.token}\n  - name: x\n    token: ${B.token}\n`, /tenant "x" is listed twice/],
      [`tenants:\n  - name: x\n    token: ${A.token}\n    quotas: { cpuMinutes: 3 }\n`, /unknown quota "cpuMinutes"/],
      [`tenants:\n  - name: x\n    token: ${A.token}\n    quotas: { tasksPerBatch: -1 }\n`, /quota tasksPerBatch must be a positive number/],
      [`tenants:\n  - name: x\n    tokenFile: nowhere.token\n`, /tenants\[0\] \(x\): tokenFile .*nowhere\.token: ENOENT/],
      [`tenants: 3\n`, /expected a "tenants" list/],
    ];
    for (const [text, reason] of bad) {
      writeFileSync(file, text);
      assert.throws(() => new ServiceTenants(ServiceTenants.readFile(file)), reason);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('over its quota a tenant gets 429 and the reason; another tenant\'s batches run meanwhile; each is logged by name', async () => {
  // The service's records, at info: `[component] message {detail}`.
  const logged: string[] = [];
  const keep = (fields: object, message: string) => {
    const { component, detail } = fields as { component?: string; detail?: unknown };
    if (component === 'service') logged.push(`[${component}] ${message} ${JSON.stringify(detail ?? {})}\n`);
  };
  setLogger({ error: keep, warn: keep, info: keep, debug: () => undefined, trace: () => undefined, isLevelEnabled: (l: string) => l !== 'debug' && l !== 'trace' });
  const svc = await startHttpsService({
    tenants: [{ ...A, quotas: { concurrentBatches: 1, tasksPerBatch: 8, bytesPerRequest: 256 * 1024, cpuSecondsPerMinute: 1 } }, B],
  });
  const billing = await Distribution.connect(svc.service.url, { token: B.token, ca: svc.tls.cert });
  try {
    const analytics = svc.dist; // connected with the first tenant's token
    const spin = (ms: number) => { const end = Date.now() + ms; let x = 0; while (Date.now() < end) x++; return x > 0; };
    await assert.rejects(analytics.start(Array.from({ length: 9 }, () => analytics.task(() => 1))), /refused the batch \(429\): tenant analytics: a batch of 9 tasks exceeds its quota of 8 tasks per batch/);
    const noise = new Float64Array(64 * 1024).map(() => Math.random()); // 512 KB that does not compress
    await assert.rejects(analytics.start([analytics.task(() => noise[0])]), /\(429\): tenant analytics: a request of \d+ bytes exceeds its quota of 262144 bytes per request/);
    // One batch of A runs (1.2 s of CPU); a second one at the same time is refused, while B's run.
    const long = [analytics.task(() => spin(600)), analytics.task(() => spin(600))];
    const running = await analytics.start(long);
    await assert.rejects(analytics.start([analytics.task(() => 2)]), /\(429\): tenant analytics: 1 batch\(es\) running, its quota is 1 at once/);
    const bs = [0, 1, 2].map((i) => billing.task(() => i * 10));
    const bDone = await billing.start(bs);
    assert.deepEqual(await Promise.all(bs.map((t) => t.result)), [0, 10, 20], 'the other tenant\'s batch was admitted and ran');
    await bDone.done;
    await running.done;
    assert.deepEqual(await Promise.all(long.map((t) => t.result)), [true, true]);
    // Now A has used over 1 s of CPU in the last minute.
    await assert.rejects(analytics.start([analytics.task(() => 3)]), /\(429\): tenant analytics: its tasks used 1\.\d s of CPU in the last minute, its quota is 1 s per minute/);
    const [a, b] = svc.service.tenants.all;
    assert.deepEqual([a!.name, a!.counts], [A.name, { batches: 1, tasks: 2, refused: 4 }], 'of A, only the admitted batch reached the cluster');
    assert.deepEqual([b!.name, b!.counts], [B.name, { batches: 1, tasks: 3, refused: 0 }]);
    const lines = logged.join('');
    assert.match(lines, /\[service\] tenant analytics: refused .*"reason":"tenant analytics: a batch of 9 tasks/);
    assert.match(lines, /\[service\] tenant billing: batch [0-9a-f]+\.1 started/);
    assert.match(lines, /\[service\] tenant analytics: batch [0-9a-f]+\.1 done .*"cpuMs":\d+/);
  } finally {
    setLogger(undefined);
    await billing.close();
    await svc.close();
  }
});
