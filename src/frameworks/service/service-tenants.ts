/**
 * Who may use a service, and how much (issue #26 item 6): each tenant has a name, a token (at least 16
 * characters; tokens are compared in constant time, by their SHA-256) and quotas — concurrent batches,
 * tasks per batch, bytes per request (decompressed), CPU seconds per minute (the tasks' own time in the
 * sandboxes over the last 60 s). A request over a quota is refused with 429 and the reason before it
 * reaches the cluster, so a tenant over its quota takes nothing from the others.
 *
 * The tenants file (`tidepool serve --tenants FILE`), JSON or YAML:
 *
 *   tenants:
 *     - name: analytics
 *       tokenFile: analytics.token          # or token: "…" (relative paths: from the file's directory)
 *       quotas: { concurrentBatches: 2, tasksPerBatch: 10000, bytesPerRequest: 67108864, cpuSecondsPerMinute: 120 }
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';

export interface TenantQuotas {
  /** Batches of the tenant running at once. */
  concurrentBatches?: number;
  tasksPerBatch?: number;
  /** Bytes of one request once decompressed (a batch, or a `put`). */
  bytesPerRequest?: number;
  /** The tasks' own time in the sandboxes, summed over the last minute. */
  cpuSecondsPerMinute?: number;
}

export interface TenantSpec {
  name: string;
  token: string;
  quotas?: TenantQuotas;
}

const QUOTA_KEYS: readonly (keyof TenantQuotas)[] = ['concurrentBatches', 'tasksPerBatch', 'bytesPerRequest', 'cpuSecondsPerMinute'];
const MINUTE_MS = 60_000;

/** A refusal: the HTTP status and why. */
export interface Refusal {
  status: 429;
  reason: string;
  retryAfterS?: number;
}

export class Tenant {
  /** Batches running now. */
  running = 0;
  /** Counters for logs and tests. */
  readonly counts = { batches: 0, tasks: 0, refused: 0 };
  /** CPU used, as (time, ms) samples of the last minute. */
  private readonly cpu: [number, number][] = [];

  constructor(readonly name: string, readonly quotas: TenantQuotas) {}

  /** CPU ms used in the last minute. */
  cpuMsLastMinute(now = Date.now()): number {
    while (this.cpu.length > 0 && this.cpu[0]![0] <= now - MINUTE_MS) this.cpu.shift();
    return this.cpu.reduce((n, [, ms]) => n + ms, 0);
  }

  recordCpu(ms: number, now = Date.now()): void {
    if (ms > 0) this.cpu.push([now, ms]);
  }

  /** Why a request of `bytes` may not go on, if it may not. */
  refuseBytes(bytes: number): Refusal | undefined {
    const max = this.quotas.bytesPerRequest;
    if (max !== undefined && bytes > max) return this.refused(`tenant ${this.name}: a request of ${bytes} bytes exceeds its quota of ${max} bytes per request`);
    return undefined;
  }

  /** Why a batch of `tasks` tasks may not start now, if it may not. */
  refuseBatch(tasks: number, now = Date.now()): Refusal | undefined {
    const q = this.quotas;
    if (q.tasksPerBatch !== undefined && tasks > q.tasksPerBatch) return this.refused(`tenant ${this.name}: a batch of ${tasks} tasks exceeds its quota of ${q.tasksPerBatch} tasks per batch`);
    if (q.concurrentBatches !== undefined && this.running >= q.concurrentBatches) return this.refused(`tenant ${this.name}: ${this.running} batch(es) running, its quota is ${q.concurrentBatches} at once`, 1);
    if (q.cpuSecondsPerMinute !== undefined) {
      const used = this.cpuMsLastMinute(now);
      if (used >= q.cpuSecondsPerMinute * 1000) {
        const oldest = this.cpu[0]?.[0] ?? now;
        return this.refused(`tenant ${this.name}: its tasks used ${(used / 1000).toFixed(1)} s of CPU in the last minute, its quota is ${q.cpuSecondsPerMinute} s per minute`, Math.max(1, Math.ceil((oldest + MINUTE_MS - now) / 1000)));
      }
    }
    return undefined;
  }

  private refused(reason: string, retryAfterS?: number): Refusal {
    this.counts.refused++;
    return { status: 429, reason, ...(retryAfterS !== undefined ? { retryAfterS } : {}) };
  }
}

export class ServiceTenants {
  private readonly byDigest: [Buffer, Tenant][];

  constructor(specs: readonly TenantSpec[]) {
    if (specs.length === 0) throw new Error('the service needs at least one tenant (a token)');
    const names = new Set<string>();
    this.byDigest = specs.map((s) => {
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(s.name)) throw new Error(`tenant "${s.name}": a name is 1 to 64 letters, digits, '.', '_' or '-'`);
      if (names.has(s.name)) throw new Error(`tenant "${s.name}" is listed twice`);
      names.add(s.name);
      if (typeof s.token !== 'string' || s.token.length < 16) throw new Error(`tenant ${s.name}: its token needs at least 16 characters`);
      return [digest(s.token), new Tenant(s.name, checkQuotas(s.quotas ?? {}, s.name))];
    });
    const digests = new Set(this.byDigest.map(([d]) => d.toString('hex')));
    if (digests.size !== this.byDigest.length) throw new Error('two tenants have the same token');
  }

  /** The tenant whose token the `Authorization: Bearer …` header carries (every token compared, in constant time). */
  authenticate(header: string | undefined): Tenant | undefined {
    const m = /^Bearer (.+)$/.exec(header ?? '');
    if (!m) return undefined;
    const given = digest(m[1]!);
    let found: Tenant | undefined;
    for (const [d, tenant] of this.byDigest) if (timingSafeEqual(d, given)) found = tenant;
    return found;
  }

  get all(): Tenant[] {
    return this.byDigest.map(([, t]) => t);
  }

  /** Reads a tenants file (JSON or YAML); token files are read relative to its directory. */
  static readFile(file: string): TenantSpec[] {
    let doc: unknown;
    try {
      doc = parseYaml(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new Error(`${file}: ${(e as Error).message}`);
    }
    const list = (doc as { tenants?: unknown } | null)?.tenants;
    if (!Array.isArray(list)) throw new Error(`${file}: expected a "tenants" list`);
    return list.map((raw, i): TenantSpec => {
      const where = `${file}: tenants[${i}]`;
      if (typeof raw !== 'object' || raw === null) throw new Error(`${where}: expected an object with name, token or tokenFile, quotas`);
      const t = raw as Record<string, unknown>;
      for (const key of Object.keys(t)) if (!['name', 'token', 'tokenFile', 'quotas'].includes(key)) throw new Error(`${where}: unknown field "${key}"`);
      if (typeof t.name !== 'string') throw new Error(`${where}: "name" must be a string`);
      let token: unknown = t.token;
      if (t.tokenFile !== undefined) {
        if (typeof t.tokenFile !== 'string' || token !== undefined) throw new Error(`${where} (${t.name}): give "token" or "tokenFile", not both`);
        const tokenPath = path.resolve(path.dirname(file), t.tokenFile);
        try {
          token = readFileSync(tokenPath, 'utf8').trim();
        } catch (e) {
          throw new Error(`${where} (${t.name}): tokenFile ${tokenPath}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
        }
      }
      if (typeof token !== 'string') throw new Error(`${where} (${t.name}): needs "token" or "tokenFile"`);
      if (t.quotas !== undefined && (typeof t.quotas !== 'object' || t.quotas === null)) throw new Error(`${where} (${t.name}): "quotas" must be an object`);
      return { name: t.name, token, ...(t.quotas !== undefined ? { quotas: t.quotas as TenantQuotas } : {}) };
    });
  }
}

function checkQuotas(q: TenantQuotas, name: string): TenantQuotas {
  for (const key of Object.keys(q)) {
    if (!(QUOTA_KEYS as readonly string[]).includes(key)) throw new Error(`tenant ${name}: unknown quota "${key}" (known: ${QUOTA_KEYS.join(', ')})`);
    const v = q[key as keyof TenantQuotas];
    if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) throw new Error(`tenant ${name}: quota ${key} must be a positive number, got ${JSON.stringify(v)}`);
  }
  return q;
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
