import { parseConnectionString } from '../../coord/connection-string.js';
import { newNodeId, TidepoolNode } from '../../runtime/node/node.js';
import { loadJobKind } from '../../runtime/kinds/kind-registry.js';
import { TASK_POOL_KIND } from '../../runtime/pool/task-pool-ref.js';
import { nodeIdOfCertificate } from '../../transport/channel-credentials.js';
import { TcpTransport } from '../../transport/tcp-transport.js';
import { log } from '../../util/log.js';
import { addressKind, formatHostPort, nodeAddresses, reachableUrl, type HostPort } from '../addresses.js';
import { jsonOption, zkOptions } from '../common-options.js';
import { connectZk } from '../connection.js';
import { UsageError } from '../errors.js';
import { clusterSecret, defaultWorkers, readFlagFile } from '../options.js';
import { duration, kinds } from '../settings/kinds.js';
import { formatDuration } from '../settings/durations.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';

interface NodeOptions {
  zk: string;
  timeout: number;
  workers?: number;
  secretFile?: string;
  listen?: HostPort;
  advertise?: HostPort;
  port?: number;
  id?: string;
  metricsPort?: number;
  sessionTimeout: number;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  /** Several on the command line; one from TIDEPOOL_ALLOW_CODE or a settings file. */
  allowCode?: string[] | string;
  json?: boolean;
}

/** The operator's certificates for the node channel, when --tls-cert/--tls-key/--tls-ca are given (all three or none). */
function operatorTls(opts: NodeOptions): { cert: string; key: string; ca: string } | undefined {
  const given = [opts.tlsCert, opts.tlsKey, opts.tlsCa].filter((f) => f !== undefined).length;
  if (given === 0) return undefined;
  if (given !== 3) throw new UsageError('--tls-cert, --tls-key and --tls-ca go together (the node\'s certificate and key, and the CA certificates peers chain to)');
  return { cert: readFlagFile(opts.tlsCert!, '--tls-cert'), key: readFlagFile(opts.tlsKey!, '--tls-key'), ca: readFlagFile(opts.tlsCa!, '--tls-ca') };
}

function certificateNodeId(pem: string): string {
  try {
    return nodeIdOfCertificate(pem);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** A transport, or a UsageError for credentials it refuses (a certificate for another node, a key that does not match). */
function newTransport(make: () => TcpTransport): TcpTransport {
  try {
    return make();
  } catch (err) {
    throw new UsageError(`node channel: ${(err as Error).message}`);
  }
}

/** `tidepool node`: runs one node process that joins the cluster and follows its job assignment. */
export function registerNodeCommand(program: SettingsCommand): void {
  jsonOption(zkOptions(program.command('node')
    .description('run a node: register in the cluster, take part in the job it is assigned to, drain on SIGTERM'),
  'the cluster\'s ZooKeeper ensemble', 'a node joins a cluster registered on ZooKeeper'), 'print one JSON line when ready')
    .setting('--workers <n>', 'worker threads (default: one per core)', kinds.positiveInt)
    .option('--secret-file <file>', 'file holding the cluster secret shared by all nodes (or the secret itself in $TIDEPOOL_SECRET)')
    .setting('--listen <addr[:port]>', 'address (and port) to listen on for peers; 0.0.0.0 = every interface (default: the advertised address)', addressKind)
    .setting('--advertise <addr[:port]>', 'address (and port) peers dial, published in the cluster (default: the --listen address, or, listening on 0.0.0.0 or nothing given, this machine\'s address towards ZooKeeper; the port is the one listened on)', addressKind)
    .deprecatedFlag('--host <host>', 'listen')
    .setting('--port <port>', 'TCP port for peers (0 = any free port; default 0, or the port in --listen)', kinds.port)
    .setting('--id <id>', 'node id (default: random, or the one the --tls-cert certificate names)', kinds.text)
    .option('--tls-cert <file>', 'node channel: this node\'s certificate (PEM) from your PKI, naming it as URI urn:tidepool:node:<id> (default: one issued under the cluster secret)')
    .option('--tls-key <file>', 'node channel: the private key of --tls-cert (PEM)')
    .option('--tls-ca <file>', 'node channel: the CA certificates (PEM) peers\' certificates must chain to')
    .option('--allow-code <location...>', 'also run job code from these locations (file: URLs of directories, e.g. file:///opt/apps/); by default a node runs only built-in code, files of its tidepool installation, installed packages and code shipped signed with the secret (docs/security.md)')
    .setting('--session-timeout <duration>', 'how long the coordination session outlives silence: a node not heard from this long is gone and its tasks recovered elsewhere (shorter: faster recovery; longer: a node on a machine so loaded that it cannot answer in time is not declared dead); ZooKeeper grants a value within its minSessionTimeout–maxSessionTimeout (by default 4s–40s)', duration(undefined, true), '6s')
    .setting('--metrics-port <port>', 'serve /metrics (Prometheus), /healthz and /readyz on this port of the --listen address (0 = any free port; default: not served)', kinds.port)
    .addHelpText('after', [
      '',
      'Runs until SIGINT/SIGTERM, then drains: its tasks move to the job\'s other nodes.',
      'Node-to-node connections are mutual TLS 1.3. By default each node holds a certificate issued under the',
      'cluster secret; with --tls-cert/--tls-key/--tls-ca they come from your PKI. SIGHUP re-reads --secret-file',
      '(one secret per line: the first is presented and signs, all are accepted; see docs/security.md) and the --tls-* files.',
      '',
      'Old flag: --host ADDR (now --listen; it still works, with a note, for one release).',
      '',
      'A new cluster\'s secret comes from `tidepool secret new` (one file, copied to every node and writing client).',
      '',
      'Examples:',
      '  tidepool node --zk 127.0.0.1:2181 --workers 4 --secret-file ~/.tidepool/secret',
      '  tidepool node --zk 127.0.0.1:2181 --listen 0.0.0.0:0 --advertise 127.0.0.1 --secret-file ~/.tidepool/secret',
      '  tidepool node --zk 127.0.0.1:2181 --secret-file ~/.tidepool/secret --allow-code file:///opt/apps/',
    ].join('\n'))
    .action(async (opts: NodeOptions) => {
      // Listening for SIGTERM before anything is announced: a signal right after the ready line must drain us.
      const stopping = stopSignal();
      const workers = opts.workers ?? defaultWorkers();
      const secret = clusterSecret(opts.secretFile);
      if (opts.id !== undefined && !/^[\w.-]{1,64}$/.test(opts.id)) throw new UsageError(`--id: "${opts.id}" may use letters, digits, "_", "." and "-" only`);
      const tls = operatorTls(opts);
      const named = tls ? certificateNodeId(tls.cert) : undefined;
      if (named !== undefined && opts.id !== undefined && named !== opts.id) throw new UsageError(`--id: "${opts.id}" but the --tls-cert certificate names node "${named}"`);
      const nodeId = opts.id ?? named ?? newNodeId();
      const target = parseConnectionString(opts.zk);
      const { listen, advertise } = await nodeAddresses(opts, target.backend === 'zookeeper' ? target.hosts : []);
      const transport = newTransport(() => new TcpTransport({ nodeId, secret: [...secret.accepted], ...(tls ? { tls } : {}), host: listen.host, port: listen.port, advertise }));
      // The task pool's code is loaded before the node registers: its first job does not wait for it.
      await loadJobKind(TASK_POOL_KIND);
      const client = await connectZk(opts.zk, opts.timeout, { sessionTimeoutMs: opts.sessionTimeout, secret });
      if (client.sessionTimeoutMs !== opts.sessionTimeout) log.warn('node', `--session-timeout ${formatDuration(opts.sessionTimeout)}: ZooKeeper granted ${formatDuration(client.sessionTimeoutMs)} (its minSessionTimeout–maxSessionTimeout bound it)`);
      const node = await TidepoolNode.start({
        client, transport, workers, nodeId, secret, ...(opts.allowCode !== undefined ? { allowCode: [opts.allowCode].flat() } : {}),
        ...(opts.metricsPort !== undefined ? { metrics: { port: opts.metricsPort, host: listen.host } } : {}),
      }).catch(async (err: unknown) => {
        // A refused start (a root this secret does not protect, say) leaves nothing open: the command exits with its error.
        await client.close();
        throw err;
      });
      const reload = () => {
        try {
          const next = clusterSecret(opts.secretFile);
          transport.setCredentials(operatorTls(opts) ?? { secrets: [...next.accepted] });
          // The coordination session presents the new secret's credentials too, new znodes carry its list, and
          // specs signed with any listed secret are admitted.
          node.useSecret(next);
          log.warn('node', `SIGHUP: node channel credentials reloaded (${transport.channelSummary}); coordination and code admission use ${next.accepted.length} secret(s)`);
        } catch (err) {
          log.error('node', `SIGHUP: kept the node channel credentials: ${(err as Error).message}`);
        }
      };
      process.on('SIGHUP', reload); // before the ready line, like SIGTERM: a SIGHUP right after it must reload, not kill
      const metricsUrl = node.metricsUrl === undefined ? undefined : reachableUrl(node.metricsUrl, advertise.host);
      const ready = { node: node.id, address: transport.address, listen: formatHostPort(listen.host, transport.port), workers, sessionTimeoutMs: client.sessionTimeoutMs, ...(metricsUrl ? { metrics: metricsUrl } : {}) };
      process.stdout.write(opts.json ? `${JSON.stringify(ready)}\n` : `node ${node.id} ready at ${transport.address}${`tcp://${ready.listen}` === transport.address ? '' : ` (listening on ${ready.listen})`} with ${workers} worker(s)${metricsUrl ? `; metrics at ${metricsUrl}/metrics` : ''}\n`);
      client.onState((s) => {
        if (s === 'expired') {
          // Our ephemeral registration is gone and our tasks are being recovered elsewhere: stop.
          log.error('node', 'coordination session expired; exiting so that the cluster recovers our tasks');
          process.exit(3);
        }
      });
      log.info('node', `${await stopping}: draining`);
      process.off('SIGHUP', reload);
      try {
        await node.shutdown();
        await client.close();
      } catch (err) {
        log.error('node', 'drain failed', err);
      }
    });
}
