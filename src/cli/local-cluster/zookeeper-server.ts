/**
 * A ZooKeeper server from Debian's `zookeeper` package (3.8: the jars in /usr/share/java and a
 * `java` on PATH), as `tidepool up` runs it and as the tests do: its zoo.cfg, its log4j settings,
 * the java command line, and the four-letter words that tell whether it serves.
 */
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const JAVA_DIR = '/usr/share/java';
export const ZOOKEEPER_JAR = path.join(JAVA_DIR, 'zookeeper.jar');

/** Small and quick JVMs: a local cluster runs several servers beside the nodes. */
export const ZOOKEEPER_JVM_FLAGS = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Xshare:auto', '-XX:-UsePerfData'];

/** Modes of a server that serves clients (`srvr` answers one of these). */
export const SERVING_MODES: ReadonlySet<string> = new Set(['leader', 'follower', 'standalone']);

export interface ZooKeeperPeer {
  id: number;
  host: string;
  /** Followers to the leader. */
  quorumPort: number;
  /** Leader election. */
  electionPort: number;
}

export interface ZooKeeperServerConfig {
  dataDir: string;
  /** Address clients connect to (the client port listens there only). */
  clientAddress: string;
  clientPort: number;
  /** Every server of the ensemble (empty or one: standalone). */
  peers: readonly ZooKeeperPeer[];
  tickTime: number;
  minSessionTimeout: number;
  maxSessionTimeout: number;
  /** Disposable data: no fsync and no 64 MB log preallocation (tests, `tidepool up`). */
  disposable?: boolean;
}

/** Why this machine cannot run a ZooKeeper server, or undefined when it can (needs the jar; java is checked on spawn). */
export function zookeeperMissing(): string | undefined {
  return existsSync(ZOOKEEPER_JAR) ? undefined : `ZooKeeper is not installed (${ZOOKEEPER_JAR} is missing): apt-get install zookeeper default-jre-headless`;
}

/**
 * The class path: zookeeper.jar's manifest brings its dependencies; the logging binding is named
 * explicitly because /usr/share/java holds several SLF4J bindings and the JVM would pick one by
 * directory order (slf4j-nop: no log at all). Debian's 3.8 logs through log4j 1.2.
 */
export function zookeeperClassPath(): string {
  const log4j = [path.join(JAVA_DIR, 'slf4j-log4j12.jar'), path.join(JAVA_DIR, 'log4j-1.2.jar')];
  if (log4j.every((jar) => existsSync(jar))) return [ZOOKEEPER_JAR, ...log4j].join(':');
  return `${ZOOKEEPER_JAR}:${JAVA_DIR}/*`;
}

/** Arguments of `java` for the server whose zoo.cfg and log4j.properties are in `dir`, with a heap of `heapMb` MiB. */
export function zookeeperJavaArgs(dir: string, heapMb = 128): string[] {
  return [
    `-Xmx${heapMb}m`,
    ...ZOOKEEPER_JVM_FLAGS,
    `-Dlog4j.configuration=file:${path.join(dir, 'log4j.properties')}`,
    // Also honoured by Debian's stock log4j.properties, should ours not be picked up.
    `-Dzookeeper.log.dir=${dir}`,
    '-Dzookeeper.root.logger=INFO,ROLLINGFILE',
    '-Dzookeeper.jmx.log4j.disable=true',
    '-cp',
    zookeeperClassPath(),
    'org.apache.zookeeper.server.quorum.QuorumPeerMain',
    path.join(dir, 'zoo.cfg'),
  ];
}

export function zooCfg(cfg: ZooKeeperServerConfig): string {
  const quorum = cfg.peers.length > 1;
  const lines = [
    `tickTime=${cfg.tickTime}`,
    'initLimit=10',
    'syncLimit=5',
    `dataDir=${cfg.dataDir}`,
    `clientPort=${cfg.clientPort}`,
    `clientPortAddress=${cfg.clientAddress}`,
    ...(quorum ? cfg.peers.map((p) => `server.${p.id}=${p.host}:${p.quorumPort}:${p.electionPort}`) : []),
    ...(quorum ? ['standaloneEnabled=false'] : []),
    'admin.enableServer=false',
    '4lw.commands.whitelist=*',
    'maxClientCnxns=0',
    'autopurge.purgeInterval=0',
    `minSessionTimeout=${cfg.minSessionTimeout}`,
    `maxSessionTimeout=${cfg.maxSessionTimeout}`,
    // A killed JVM loses nothing the page cache holds; preallocating 64 MB per log is waste here.
    ...(cfg.disposable ? ['forceSync=no', 'preAllocSize=1024'] : []),
  ];
  return `${lines.join('\n')}\n`;
}

export function log4jProperties(logFile: string): string {
  return [
    'log4j.rootLogger=INFO, FILE',
    'log4j.appender.FILE=org.apache.log4j.FileAppender',
    `log4j.appender.FILE.File=${logFile}`,
    'log4j.appender.FILE.Append=true',
    'log4j.appender.FILE.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{1} - %m%n',
    '',
  ].join('\n');
}

/** Sends a four-letter word (ruok, srvr, mntr, …) and returns the whole answer. */
export function fourLetterWord(host: string, port: number, word: string, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`'${word}' on ${host}:${port}: no answer within ${timeoutMs} ms`)), timeoutMs);
    // Plain write, not end(): the server answers and then closes the connection itself.
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', (hadError) => {
      clearTimeout(timer);
      if (!hadError) resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The server's mode ('leader', 'follower', 'standalone') while it serves; undefined otherwise, with what was seen. */
export async function serverMode(host: string, port: number): Promise<{ mode: string | undefined; seen: string }> {
  try {
    const answer = await fourLetterWord(host, port, 'srvr');
    const mode = /^Mode: (\w+)/m.exec(answer)?.[1];
    return { mode, seen: mode ? `mode ${mode}` : answer.trim() || 'empty srvr answer' };
  } catch (err) {
    return { mode: undefined, seen: (err as Error).message };
  }
}
