/** A parsed coordination connection string. */
export type ConnectionTarget =
  | { backend: 'embedded'; name: string }
  | { backend: 'zookeeper'; hosts: Array<{ host: string; port: number }>; chroot: string };

export const CONNECTION_STRING_HELP = 'expected "embedded", "embedded:NAME" or "zk://host:port[,host:port…][/chroot]"';

/**
 * Parses `embedded` (the default, in-process), `embedded:NAME` (a separate in-process instance)
 * or `zk://host:port[,host:port…][/chroot]`. Throws an Error that names the offending part.
 */
export function parseConnectionString(input: string | undefined): ConnectionTarget {
  const s = (input ?? 'embedded').trim();
  if (s === '' || s === 'embedded') return { backend: 'embedded', name: 'default' };
  if (s.startsWith('embedded:')) {
    const name = s.slice('embedded:'.length);
    if (!/^[\w.-]+$/.test(name)) throw new Error(`bad connection string "${s}": embedded instance name must be letters, digits, "_", "." or "-"`);
    return { backend: 'embedded', name };
  }
  if (!s.startsWith('zk://')) throw new Error(`bad connection string "${s}": ${CONNECTION_STRING_HELP}`);
  const rest = s.slice('zk://'.length);
  const slash = rest.indexOf('/');
  const hostPart = slash === -1 ? rest : rest.slice(0, slash);
  const chroot = slash === -1 ? '' : rest.slice(slash).replace(/\/+$/, '');
  if (chroot !== '' && !/^(\/[^/\s]+)+$/.test(chroot)) throw new Error(`bad connection string "${s}": chroot "${chroot}" is not a znode path`);
  if (hostPart === '') throw new Error(`bad connection string "${s}": no host:port given`);
  const hosts = hostPart.split(',').map((hp) => {
    const m = /^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(hp.trim());
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) throw new Error(`bad connection string "${s}": "${hp}" is not host:port`);
    return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
  });
  return { backend: 'zookeeper', hosts, chroot };
}
