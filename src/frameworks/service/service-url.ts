/**
 * The URL a service announces (`serve --json` prints it): over TLS, a name its certificate holds, so
 * that a client connecting to it passes the certificate check — the listening address when the
 * certificate names it (an IP subjectAltName), else `localhost` for a loopback address, else the
 * certificate's first DNS name for a wildcard address (0.0.0.0, ::). Also the certificate's names for
 * error messages (tls-errors.ts).
 */
import { isIP } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { log } from '../../util/log.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** A certificate's names, as `DNS:x` and `IP:y` from its subjectAltName, else `CN:z` from its subject's CN. */
export function namesOf(subjectAltName: string | undefined, commonName: string | undefined): string[] {
  const san = (subjectAltName ?? '').split(/,\s*/).filter(Boolean).map((e) => e.replace(/^IP Address:/, 'IP:'));
  if (san.length > 0) return san;
  return commonName ? [`CN:${commonName}`] : [];
}

/** The names a certificate (PEM) is valid for. */
export function certificateNames(cert: string | Buffer): string[] {
  const x = new X509Certificate(cert);
  return namesOf(x.subjectAltName, /(?:^|\n)CN=([^\n]+)/.exec(x.subject)?.[1]);
}

export function serviceUrl(host: string, port: number, cert?: string | Buffer): string {
  const at = (h: string) => `${cert ? 'https' : 'http'}://${isIP(h) === 6 ? `[${h}]` : h}:${port}`;
  if (!cert) return at(host);
  const x = new X509Certificate(cert);
  const names = certificateNames(cert);
  const dns = names.filter((n) => n.startsWith('DNS:') && !n.includes('*')).map((n) => n.slice(4));
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  if (!wildcard && (isIP(host) ? x.checkIP(host) : x.checkHost(host)) !== undefined) return at(host);
  if (LOOPBACK.test(host) && x.checkHost('localhost') !== undefined) return at('localhost');
  if (wildcard && dns.length > 0) return at(dns[0]!);
  const ip = names.find((n) => n.startsWith('IP:'))?.slice(3);
  if (wildcard && ip) return at(ip);
  log.warn('service', `the certificate names ${names.join(', ') || 'nothing'}, not the address ${host} the service listens on: clients of ${at(host)} will fail its check (make one with subjectAltName=IP:${host}, see docs/service.md)`);
  return at(host);
}
