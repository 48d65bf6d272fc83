/**
 * Test support: a tidepool service over real HTTPS on an embedded cluster (isolated-vm sandboxes),
 * and a Distribution client of it whose tasks' console lines are collected in `printed`.
 */
import { Cluster } from '../../../src/runtime/client/cluster.js';
import { Distribution, startService, type ConsoleLine, type RunningService, type ServiceOptions } from '../../../src/frameworks/service/index.js';
import { selfSignedCert } from './tls.js';

export interface HttpsService {
  cluster: Cluster;
  service: RunningService;
  dist: Distribution;
  token: string;
  tls: { cert: string; key: string };
  printed: ConsoleLine[];
  close(): Promise<void>;
}

export async function startHttpsService(opts: Partial<Pick<ServiceOptions, 'maxBodyBytes' | 'limits' | 'packages' | 'tenants' | 'sessionBlobBytes'>> = {}): Promise<HttpsService> {
  const token = 'test-token-0123456789abcdef';
  const tls = selfSignedCert();
  const cluster = await Cluster.embedded({ nodes: 1, workers: 2 });
  const service = await startService({ cluster, tls, ...(opts.tenants ? {} : { token }), port: 0, limits: { timeoutMs: 120_000, memoryMb: 128 }, ...opts });
  const printed: ConsoleLine[] = [];
  const dist = await Distribution.connect(service.url, { token: opts.tenants?.[0]?.token ?? token, ca: tls.cert, onConsole: (l) => printed.push(l) });
  return {
    cluster, service, dist, token, tls, printed,
    async close() {
      await dist.close();
      await service.close();
      await cluster.close();
    },
  };
}
