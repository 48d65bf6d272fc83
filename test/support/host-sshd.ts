/**
 * Test support: Debian's OpenSSH server inside a test host (hosts.ts), with a configuration, host
 * key and authorized key of its own in the host's temporary directory (the package's service and
 * /etc/ssh are never used), and a client key pair for the test. Key authentication only, as root.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { HostProcess, TestHost } from './hosts.js';
import { PROJECT_ROOT } from './hosts.js';
import { waitFor } from './wait.js';

let ensured = false;

/** Runs scripts/ensure-sshd.sh once per process. */
export function ensureSshd(): void {
  if (ensured) return;
  execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts/ensure-sshd.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 15 * 60_000 });
  ensured = true;
}

/** A fresh ed25519 key pair in `dir`: the private key's path and the public key's text. */
export function sshKeyPair(dir: string, name = 'id_ed25519'): { privateKey: string; publicKey: string } {
  mkdirSync(dir, { recursive: true });
  const privateKey = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'tidepool-test', '-f', privateKey]);
  return { privateKey, publicKey: readFileSync(`${privateKey}.pub`, 'utf8').trim() };
}

/** Starts sshd on the host's address, port 22, accepting `authorizedKey`; resolves once it accepts connections. */
export async function startSshd(host: TestHost, authorizedKey: string): Promise<HostProcess> {
  ensureSshd();
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation directory
  const dir = host.dir('sshd');
  const hostKey = path.join(dir, 'host_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', hostKey]);
  writeFileSync(path.join(dir, 'authorized_keys'), `${authorizedKey}\n`, { mode: 0o600 });
  const config = path.join(dir, 'sshd_config');
  writeFileSync(config, [
    `ListenAddress ${host.address}:22`,
    `HostKey ${hostKey}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PermitRootLogin prohibit-password',
    'UsePAM no',
    'StrictModes no',
    'LogLevel ERROR',
    '',
  ].join('\n'));
  const sshd = host.spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config]);
  await waitFor(async () => {
    if (sshd.exitCode !== undefined) throw new Error(`sshd on ${host.name} ended (${sshd.exitCode}): ${sshd.stderr()}`);
    return new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: host.address, port: 22 });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }, `sshd on ${host.name} to accept connections`);
  return sshd;
}

/** ssh options for the test's sessions: no known_hosts (fresh host keys every run), quiet. */
export const TEST_SSH_OPTIONS = ['-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR'] as const;
