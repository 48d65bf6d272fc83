import type { Command } from 'commander';
import { connect } from '../../coord/connect.js';
import { newNodeId, TidepoolNode } from '../../runtime/node.js';
import { TcpTransport } from '../../transport/tcp-transport.js';
import { log } from '../../util/log.js';
import { UsageError } from '../errors.js';
import { stopSignal } from '../stop-signal.js';
import { clusterSecret, defaultWorkers, port, positiveInt, zookeeperConnection } from '../options.js';

interface NodeOptions {
  zk?: string;
  workers?: string;
  secretFile?: string;
  host: string;
  port: string;
  id?: string;
  metricsPort?: string;
  json?: boolean;
}

/** `tidepool node`: runs one node process that joins the cluster and follows its job assignment. */
export function registerNodeCommand(program: Command): void {
  program
    .command('node')
    .description('run a node: register in the cluster, take part in the job it is assigned to, drain on SIGTERM')
    .option('--zk <conn>', 'ZooKeeper ensemble, zk://host:port[,host:port…][/chroot]')
    .option('--workers <n>', 'worker threads (default: one per core)')
    .option('--secret-file <file>', 'file holding the cluster secret shared by all nodes (or the secret itself in $TIDEPOOL_SECRET)')
    .option('--host <host>', 'address to listen on and publish for peers', '127.0.0.1')
    .option('--port <port>', 'TCP port for peers (0 = any free port)', '0')
    .option('--id <id>', 'node id (default: random)')
    .option('--metrics-port <port>', 'serve /metrics (Prometheus), /healthz and /readyz on this port of --host (0 = any free port; default: not served)')
    .option('--json', 'print one JSON line when ready')
    .addHelpText('after', '\nExample:\n  tidepool node --zk zk://10.0.0.5:2181 --workers 4 --secret-file /etc/tidepool/secret')
    .action(async (opts: NodeOptions) => {
      const conn = zookeeperConnection(opts.zk, 'a node joins a cluster registered on ZooKeeper');
      const workers = opts.workers === undefined ? defaultWorkers() : positiveInt(opts.workers, '--workers');
      const listenPort = port(opts.port, '--port');
      const metricsPort = opts.metricsPort === undefined ? undefined : port(opts.metricsPort, '--metrics-port');
      const secret = clusterSecret(opts.secretFile);
      if (opts.id !== undefined && !/^[\w.-]{1,64}$/.test(opts.id)) throw new UsageError(`--id: "${opts.id}" may use letters, digits, "_", "." and "-" only`);
      const client = await connect(conn, { sessionTimeoutMs: 6_000 });
      const nodeId = opts.id ?? newNodeId();
      const transport = new TcpTransport({ nodeId, secret, host: opts.host, port: listenPort });
      const node = await TidepoolNode.start({ client, transport, workers, nodeId, ...(metricsPort !== undefined ? { metrics: { port: metricsPort, host: opts.host } } : {}) });
      const ready = { node: node.id, address: transport.address, workers, ...(node.metricsUrl ? { metrics: node.metricsUrl } : {}) };
      process.stdout.write(opts.json ? `${JSON.stringify(ready)}\n` : `node ${node.id} ready at ${transport.address} with ${workers} worker(s)${node.metricsUrl ? `; metrics at ${node.metricsUrl}/metrics` : ''}\n`);
      client.onState((s) => {
        if (s === 'expired') {
          // Our ephemeral registration is gone and our tasks are being recovered elsewhere: stop.
          log.error('node', 'coordination session expired; exiting so that the cluster recovers our tasks');
          process.exit(3);
        }
      });
      log.info('node', `${await stopSignal()}: draining`);
      try {
        await node.shutdown();
        await client.close();
      } catch (err) {
        log.error('node', 'drain failed', err);
      }
    });
}
