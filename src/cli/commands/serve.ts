import type { Command } from 'commander';
import { Cluster } from '../../runtime/cluster.js';
import { startService } from '../../frameworks/service/service-server.js';
import { ServicePackages } from '../../frameworks/service/service-packages.js';
import { log } from '../../util/log.js';
import { MetricsRegistry } from '../../runtime/metrics/metrics-registry.js';
import { startMetricsServer } from '../../runtime/metrics/metrics-server.js';
import { PACKAGE_NAME } from '../../util/package-info.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers, port, positiveInt, readFlagFile, zookeeperConnection } from '../options.js';
import { stopSignal } from '../stop-signal.js';

interface ServeFlags {
  zk?: string;
  secretFile?: string;
  nodes: string;
  workers?: string;
  port: string;
  host: string;
  tlsCert?: string;
  tlsKey?: string;
  tokenFile?: string;
  insecure?: boolean;
  memoryMb: string;
  timeoutMs: string;
  maxBodyMb: string;
  package?: string[];
  metricsPort?: string;
  json?: boolean;
}

export const SERVICE_PORT = 7480;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** The service token from --token-file or $TIDEPOOL_SERVICE_TOKEN (at least 16 characters). */
function serviceToken(file: string | undefined): string {
  const token = (file !== undefined ? readFlagFile(file, '--token-file') : process.env.TIDEPOOL_SERVICE_TOKEN ?? '').trim();
  if (file === undefined && token === '') throw new UsageError('a token is required: --token-file FILE (or TIDEPOOL_SERVICE_TOKEN); clients send it as "Authorization: Bearer TOKEN"');
  if (token.length < 16) throw new UsageError(`${file !== undefined ? `--token-file: ${file}` : 'TIDEPOOL_SERVICE_TOKEN'} holds ${token.length} characters; a token needs at least 16`);
  return token;
}

/**
 * `tidepool serve`: task parallelism as a service (seed 002). Clients (`Distribution.connect`) send
 * batches of captured closures over HTTPS; each batch runs as a job on the cluster behind it —
 * embedded nodes in this process, or node processes registered on ZooKeeper.
 */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve task parallelism over HTTPS: run the closures of Distribution.connect clients on a cluster')
    .option('--zk <conn>', 'run batches on the node processes of this ZooKeeper cluster (default: embedded nodes)')
    .option('--secret-file <file>', 'with --zk: the cluster secret (or $TIDEPOOL_SECRET)')
    .option('--nodes <n>', 'embedded nodes to start (without --zk)', '1')
    .option('--workers <n>', 'worker threads per embedded node (default: usable cores / nodes)')
    .option('--port <port>', `HTTPS port (0 = any free port)`, String(SERVICE_PORT))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--tls-cert <file>', 'certificate (PEM)')
    .option('--tls-key <file>', 'private key (PEM)')
    .option('--token-file <file>', 'file holding the bearer token clients must send (or $TIDEPOOL_SERVICE_TOKEN)')
    .option('--insecure', 'plain HTTP without TLS: loopback development only')
    .option('--memory-mb <n>', 'memory limit of one task\'s isolate (MB)', '128')
    .option('--timeout-ms <n>', 'time limit of one task (ms)', '60000')
    .option('--max-body-mb <n>', 'largest batch request (MB)', '64')
    .option('--package <name-or-dir...>', 'packages the service has (found in node_modules from here up, or a package directory): clients send references to them, not their code')
    .option('--metrics-port <port>', 'serve /metrics (Prometheus: batch latencies), /healthz and /readyz on this port of --host (0 = any free port; default: not served)')
    .option('--json', 'print one JSON line when ready')
    .addHelpText('after', '\nExample:\n  openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -keyout key.pem -out cert.pem\n  head -c 24 /dev/urandom | base64 > token\n  tidepool serve --tls-cert cert.pem --tls-key key.pem --token-file token --nodes 2')
    .action(async (flags: ServeFlags) => {
      const listenPort = port(flags.port, '--port');
      const token = serviceToken(flags.tokenFile);
      const memoryMb = positiveInt(flags.memoryMb, '--memory-mb');
      const timeoutMs = positiveInt(flags.timeoutMs, '--timeout-ms');
      const maxBodyBytes = positiveInt(flags.maxBodyMb, '--max-body-mb') * 1024 * 1024;
      const metricsPort = flags.metricsPort === undefined ? undefined : port(flags.metricsPort, '--metrics-port');
      try {
        ServicePackages.resolve(flags.package); // refused before any cluster is started
      } catch (err) {
        throw new UsageError(`--package: ${(err as Error).message}`);
      }
      let tls: { cert: string; key: string } | undefined;
      if (flags.insecure) {
        if (flags.tlsCert || flags.tlsKey) throw new UsageError('--insecure and --tls-cert/--tls-key exclude each other');
        if (!LOOPBACK.test(flags.host)) throw new UsageError(`--insecure serves plain HTTP and is for loopback only; --host ${flags.host} is not a loopback address`);
      } else {
        if (!flags.tlsCert || !flags.tlsKey) throw new UsageError('--tls-cert and --tls-key are required (or --insecure for loopback development)');
        tls = { cert: readFlagFile(flags.tlsCert, '--tls-cert'), key: readFlagFile(flags.tlsKey, '--tls-key') };
      }
      let cluster: Cluster;
      let taskRef: { module: string; export: string } | undefined;
      if (flags.zk !== undefined) {
        const conn = zookeeperConnection(flags.zk, 'the service runs batches on node processes');
        cluster = await Cluster.connect(conn, { secret: clusterSecret(flags.secretFile) });
        taskRef = { module: `${PACKAGE_NAME}/service`, export: 'serviceBatchTask' }; // every node has tidepool installed
      } else {
        const nodes = positiveInt(flags.nodes, '--nodes');
        cluster = await Cluster.embedded({ nodes, workers: flags.workers !== undefined ? positiveInt(flags.workers, '--workers') : Math.max(1, Math.floor(defaultWorkers() / nodes)) });
      }
      const registry = metricsPort === undefined ? undefined : new MetricsRegistry({ prefix: 'tidepool_service_' });
      const service = await startService({ cluster, tls, insecure: flags.insecure, token, port: listenPort, host: flags.host, maxBodyBytes, limits: { memoryMb, timeoutMs }, taskRef, packages: flags.package, ...(registry ? { metrics: registry } : {}) });
      let stopping = false;
      const metrics = registry && await startMetricsServer({
        port: metricsPort!, host: flags.host, registry, health: () => undefined, readiness: () => (stopping ? 'the service is stopping' : undefined),
      });
      const ready = { url: service.url, cluster: flags.zk ?? 'embedded', ...(metrics ? { metrics: metrics.url } : {}) };
      process.stdout.write(flags.json ? `${JSON.stringify(ready)}\n` : `tidepool service at ${service.url} (cluster: ${ready.cluster})${metrics ? `; metrics at ${metrics.url}/metrics` : ''}\n`);
      log.info('serve', `${await stopSignal()}: stopping`);
      stopping = true;
      await service.close();
      await metrics?.close();
      await cluster.close();
    });
}
