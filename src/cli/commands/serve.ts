import { startService } from '../../frameworks/service/service-server.js';
import { ServicePackages } from '../../frameworks/service/service-packages.js';
import { ServiceTenants, type TenantSpec } from '../../frameworks/service/service-tenants.js';
import { log } from '../../util/log.js';
import { MetricsRegistry } from '../../runtime/metrics/metrics-registry.js';
import { startMetricsServer } from '../../runtime/metrics/metrics-server.js';
import { addressKind, isLoopback, listenAddress, type HostPort } from '../addresses.js';
import { dashboardOption, jsonOption } from '../common-options.js';
import { dashboardPlace, serveDashboard } from '../dashboard-option.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers, readFlagFile } from '../options.js';
import { DEFAULT_TIMEOUT, ZK_HELP, kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';
import { workCluster } from '../work-cluster.js';

interface ServeFlags {
  zk?: string;
  timeout: number;
  secretFile?: string;
  nodes: number;
  workers?: number;
  port?: number;
  listen?: HostPort;
  tlsCert?: string;
  tlsKey?: string;
  tokenFile?: string;
  tenants?: string;
  insecure?: boolean;
  memoryMb: number;
  taskTimeout: number;
  maxBodyMb: number;
  package?: string[];
  metricsPort?: number;
  dashboard?: boolean | number;
  json?: boolean;
}

export const SERVICE_PORT = 7480;

/** The service token from --token-file or $TIDEPOOL_SERVICE_TOKEN (at least 16 characters). */
function serviceToken(file: string | undefined): string {
  const token = (file !== undefined ? readFlagFile(file, '--token-file') : process.env.TIDEPOOL_SERVICE_TOKEN ?? '').trim();
  if (file === undefined && token === '') throw new UsageError('a token is required: --token-file FILE (or TIDEPOOL_SERVICE_TOKEN); clients send it as "Authorization: Bearer TOKEN"');
  if (token.length < 16) throw new UsageError(`${file !== undefined ? `--token-file: ${file}` : 'TIDEPOOL_SERVICE_TOKEN'} holds ${token.length} characters; a token needs at least 16`);
  return token;
}

/**
 * `tidepool serve`: task parallelism as a service ("Task Parallelization as a Service", Bläser).
 * Clients (`Distribution.connect`) send batches of captured closures over HTTPS; each batch runs as a
 * job on the cluster behind it — embedded nodes in this process, or node processes registered on ZooKeeper.
 */
export function registerServeCommand(program: SettingsCommand): void {
  const serve = program
    .command('serve')
    .description('serve task parallelism over HTTPS: run the closures of Distribution.connect clients on a cluster (after "Task Parallelization as a Service", Bläser)')
    .option('--zk <ensemble>', `run batches on the node processes of this ZooKeeper cluster (default: embedded nodes): ${ZK_HELP}`)
    .option('--timeout <duration>', 'with --zk: how long to wait for ZooKeeper to answer', DEFAULT_TIMEOUT)
    .option('--secret-file <file>', 'with --zk: the cluster secret (or $TIDEPOOL_SECRET)')
    .setting('--nodes <n>', 'embedded nodes to start (without --zk)', kinds.positiveInt, '1')
    .setting('--workers <n>', 'worker threads per embedded node (default: usable cores / nodes)', kinds.positiveInt)
    .setting('--listen <addr[:port]>', `address (and port) to serve on; 0.0.0.0 = every interface (default 127.0.0.1:${SERVICE_PORT})`, addressKind)
    .deprecatedFlag('--host <host>', 'listen')
    .setting('--port <port>', `HTTPS port (0 = any free port; default ${SERVICE_PORT}, or the port in --listen)`, kinds.port)
    .setting('--tls-cert <file>', 'certificate (PEM)', kinds.file)
    .setting('--tls-key <file>', 'private key (PEM)', kinds.file)
    .setting('--token-file <file>', 'file holding the bearer token clients must send (or $TIDEPOOL_SERVICE_TOKEN)', kinds.file)
    .setting('--tenants <file>', 'tenants with their own tokens and quotas (YAML or JSON; docs/service.md), instead of --token-file', kinds.file)
    .option('--insecure', 'plain HTTP without TLS: loopback development only')
    .setting('--memory-mb <n>', 'memory limit of one task\'s isolate (MB)', kinds.positiveInt, '128')
    .setting('--task-timeout <duration>', 'time limit of one task', kinds.duration, '60s')
    .deprecatedFlag('--timeout-ms <n>', 'taskTimeout', (v) => `${String(v)}ms`)
    .setting('--max-body-mb <n>', 'largest batch request (MB)', kinds.positiveInt, '64')
    .setting('--package <name-or-dir...>', 'packages the service has (found in node_modules from here up, or a package directory): clients send references to them, not their code', kinds.list)
    .setting('--metrics-port <port>', 'serve /metrics (Prometheus: batch latencies), /healthz and /readyz on this port of the --listen address (0 = any free port; default: not served)', kinds.port);
  dashboardOption(serve);
  jsonOption(serve, 'print one JSON line when ready')
    .addHelpText('after', `
Runs until SIGINT/SIGTERM. Old flags: --timeout-ms N (now --task-timeout) and --host ADDR (now --listen); they still
work, with a note, for one release.

Example:
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" -keyout key.pem -out cert.pem
  head -c 24 /dev/urandom | base64 > token
  tidepool serve --tls-cert cert.pem --tls-key key.pem --token-file token --nodes 2`)
    .action(async (flags: ServeFlags) => {
      // Listening for SIGTERM before anything is announced: a signal right after the ready line must stop us gracefully.
      const stopping = stopSignal();
      if (flags.tenants !== undefined && flags.tokenFile !== undefined) throw new UsageError('--tenants and --token-file exclude each other (give the default tenant an entry in the tenants file)');
      let tenants: TenantSpec[] | undefined;
      if (flags.tenants !== undefined) {
        try {
          tenants = ServiceTenants.readFile(flags.tenants);
          new ServiceTenants(tenants); // refused before any cluster is started
        } catch (err) {
          throw new UsageError(`--tenants: ${(err as Error).message}`);
        }
      }
      const listen = listenAddress(flags, { host: '127.0.0.1', port: SERVICE_PORT });
      const host = listen.host!;
      const token = tenants ? undefined : serviceToken(flags.tokenFile);
      try {
        ServicePackages.resolve(flags.package); // refused before any cluster is started
      } catch (err) {
        throw new UsageError(`--package: ${(err as Error).message}`);
      }
      let tls: { cert: string; key: string } | undefined;
      if (flags.insecure) {
        if (flags.tlsCert || flags.tlsKey) throw new UsageError('--insecure and --tls-cert/--tls-key exclude each other');
        if (!isLoopback(host)) throw new UsageError(`--insecure serves plain HTTP and is for loopback only; --listen ${host} is not a loopback address`);
      } else {
        if (!flags.tlsCert || !flags.tlsKey) throw new UsageError('--tls-cert and --tls-key are required (or --insecure for loopback development)');
        tls = { cert: readFlagFile(flags.tlsCert, '--tls-cert'), key: readFlagFile(flags.tlsKey, '--tls-key') };
      }
      const place = dashboardPlace(flags.dashboard);
      const { nodes } = flags;
      const cluster = await workCluster({
        // The service ships captured data and packages to the nodes through the data plane.
        ...(flags.zk !== undefined ? { zk: flags.zk, secret: clusterSecret(flags.secretFile), serveData: true } : {}),
        timeout: flags.timeout, nodes, workers: flags.workers ?? Math.max(1, Math.floor(defaultWorkers() / nodes)), dashboard: place !== null,
      });
      const registry = flags.metricsPort === undefined ? undefined : new MetricsRegistry({ prefix: 'tidepool_service_' });
      const service = await startService({
        cluster, tls, insecure: flags.insecure, token, tenants, port: listen.port, host, maxBodyBytes: flags.maxBodyMb * 1024 * 1024,
        limits: { memoryMb: flags.memoryMb, timeoutMs: flags.taskTimeout }, packages: flags.package, ...(registry ? { metrics: registry } : {}),
      });
      let closing = false;
      const metrics = registry && await startMetricsServer({
        port: flags.metricsPort!, host, registry, health: () => undefined, readiness: () => (closing ? 'the service is stopping' : undefined),
      });
      const dashboard = place ? await serveDashboard(cluster.coordination, place) : undefined;
      const ready = { url: service.url, cluster: flags.zk ?? 'embedded', ...(metrics ? { metrics: metrics.url } : {}), ...(dashboard ? { dashboard: dashboard.url } : {}) };
      process.stdout.write(flags.json ? `${JSON.stringify(ready)}\n` : `tidepool service at ${service.url} (cluster: ${ready.cluster})${metrics ? `; metrics at ${metrics.url}/metrics` : ''}${dashboard ? `\ndashboard: ${dashboard.url}` : ''}\n`);
      log.info('serve', `${await stopping}: stopping`);
      closing = true;
      await dashboard?.close();
      await service.close();
      await metrics?.close();
      await cluster.close();
    });
}
