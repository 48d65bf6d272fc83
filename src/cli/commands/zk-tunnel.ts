import { readFileSync } from 'node:fs';
import { parseTunnelTarget, TlsTunnel, type TlsTunnelOptions } from '../../transport/tls-tunnel.js';
import { TransportError } from '../../transport/types.js';
import { log } from '../../util/log.js';
import { jsonOption } from '../common-options.js';
import { UsageError } from '../errors.js';
import { kinds } from '../settings/kinds.js';
import type { SettingsCommand } from '../settings/settings-command.js';
import { stopSignal } from '../stop-signal.js';

interface ZkTunnelFlags {
  connect: string;
  listen: string;
  ca?: string;
  cert?: string;
  key?: string;
  pfx?: string;
  passphraseFile?: string;
  servername?: string;
  json?: boolean;
}

export const ZK_TUNNEL_PORT = 2181;

/**
 * `tidepool zk-tunnel`: ZooKeeper over TLS for tidepool, whose ZooKeeper client speaks plaintext only.
 * A local TLS tunnel (transport/tls-tunnel.ts) from a loopback port to the ensemble's
 * `secureClientPort`s; tidepool's commands then use `--zk 127.0.0.1:<port>` (docs/security.md).
 */
export function registerZkTunnelCommand(program: SettingsCommand): void {
  jsonOption(program.command('zk-tunnel')
    .description('reach a ZooKeeper ensemble that serves TLS only (secureClientPort): listen on a loopback port and forward each connection over TLS, the server\'s certificate checked; tidepool then uses --zk 127.0.0.1:PORT (docs/security.md)'),
  'print one JSON line when ready')
    .setting('--connect <servers>', 'the ensemble\'s TLS ports, host:port[,host:port…] (each server\'s secureClientPort), tried in turn', kinds.text)
    .requireSetting('connect', 'the tunnel forwards to the ensemble\'s secureClientPorts')
    .setting('--listen <address>', 'loopback address and port to listen on (0 = any free port)', kinds.text, `127.0.0.1:${ZK_TUNNEL_PORT}`)
    .setting('--ca <file>', 'certificate authorities (PEM) that vouch for the servers (default: the system\'s)', kinds.file)
    .setting('--cert <file>', 'client certificate (PEM), for servers with ssl.clientAuth=need', kinds.file)
    .setting('--key <file>', 'the client certificate\'s key (PEM)', kinds.file)
    .setting('--pfx <file>', 'client certificate and key as PKCS#12 (a keytool keystore), instead of --cert and --key', kinds.file)
    .setting('--passphrase-file <file>', 'file holding the --pfx passphrase', kinds.file)
    .setting('--servername <name>', 'the name the servers\' certificates must carry (default: each server\'s host)', kinds.text)
    .addHelpText('after', `
Runs until SIGINT/SIGTERM. The servers' certificates are checked (chain and name); a server that fails
is logged with the reason and the next one is tried.

Example:
  tidepool zk-tunnel --connect zk1.example:2281,zk2.example:2281,zk3.example:2281 --listen 127.0.0.1:12181`)
    .action(async (flags: ZkTunnelFlags) => {
      const stopping = stopSignal();
      let tunnel: TlsTunnel;
      try {
        tunnel = new TlsTunnel(tunnelOptions(flags));
      } catch (err) {
        if (err instanceof TransportError) throw new UsageError(err.message);
        throw err;
      }
      await tunnel.start();
      const ready = { listen: tunnel.address, zk: `zk://${tunnel.address}`, servers: flags.connect.split(',').map((s) => s.trim()) };
      process.stdout.write(flags.json
        ? `${JSON.stringify(ready)}\n`
        : `zk-tunnel: listening on ${ready.listen}, TLS to ${ready.servers.join(', ')}; use --zk ${ready.zk}\n`);
      log.info('tunnel', `${await stopping}: stopping`);
      await tunnel.close();
    });
}

function tunnelOptions(flags: ZkTunnelFlags): TlsTunnelOptions {
  const targets = flags.connect.split(',').map((s, i) => {
    try {
      return parseTunnelTarget(s);
    } catch (err) {
      throw new UsageError(`--connect: server ${i + 1}: ${(err as Error).message}`);
    }
  });
  let listen;
  try {
    listen = parseTunnelTarget(flags.listen, true);
  } catch (err) {
    throw new UsageError(`--listen: ${(err as Error).message}`);
  }
  if ((flags.cert === undefined) !== (flags.key === undefined)) throw new UsageError('--cert and --key go together');
  if (flags.pfx !== undefined && flags.cert !== undefined) throw new UsageError('give the client certificate as --cert and --key, or as --pfx, not both');
  if (flags.passphraseFile !== undefined && flags.pfx === undefined) throw new UsageError('--passphrase-file is the passphrase of --pfx');
  const read = (file: string) => readFileSync(file);
  return {
    targets, host: listen.host, port: listen.port,
    ...(flags.ca !== undefined ? { ca: read(flags.ca) } : {}),
    ...(flags.cert !== undefined ? { cert: read(flags.cert), key: read(flags.key!) } : {}),
    ...(flags.pfx !== undefined ? { pfx: read(flags.pfx) } : {}),
    ...(flags.passphraseFile !== undefined ? { passphrase: readFileSync(flags.passphraseFile, 'utf8').trim() } : {}),
    ...(flags.servername !== undefined ? { servername: flags.servername } : {}),
  };
}
