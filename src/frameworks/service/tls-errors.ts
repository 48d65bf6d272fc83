/**
 * A failed connection to a service as one line that says what to do: for a TLS failure, the URL, the
 * names the service's certificate holds (read with a second, unverified handshake that sends nothing)
 * and the fix — instead of `ERR_TLS_CERT_ALTNAME_INVALID` and a stack.
 */
import tls from 'node:tls';
import { namesOf } from './service-url.js';

/** A connection to a service that failed for a reason the user fixes (a URL, a certificate, a CA). */
export class ServiceConnectionError extends Error {
  constructor(message: string, readonly code?: string) {
    super(message);
    this.name = 'ServiceConnectionError';
    this.stack = `${this.name}: ${message}`; // about the setup, not about code: no frames
  }
}

const TLS_CODES = new Set([
  'ERR_TLS_CERT_ALTNAME_INVALID', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE',
]);

/** The error a failed request to `base` becomes: a one-line ServiceConnectionError when it is the setup's (TLS, refused, unknown host). */
export async function connectionError(base: URL, err: unknown): Promise<unknown> {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const url = base.origin;
  if (TLS_CODES.has(code)) {
    const names = await peerNames(base).catch(() => undefined);
    const held = names === undefined ? '' : names.length > 0 ? `; its certificate names ${names.join(', ')}` : '; its certificate names no host (no subjectAltName)';
    const fix = code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? `connect with a name the certificate holds, or make a certificate whose subjectAltName names ${base.hostname} (docs/service.md, "Running a service")`
      : code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
        ? 'make a new certificate'
        : 'trust it: pass the service\'s certificate (or its CA) as `ca` (`--ca cert.pem`)';
    return new ServiceConnectionError(`${url}: TLS ${code} (${(err as Error).message})${held}: ${fix}`, code);
  }
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT'].includes(code)) {
    return new ServiceConnectionError(`${url}: cannot connect (${code}): is \`tidepool serve\` running there and reachable?`, code);
  }
  if (code === 'EPROTO' || /wrong version number|packet length too long/i.test((err as Error).message ?? '')) {
    return new ServiceConnectionError(`${url}: the service does not speak ${base.protocol.slice(0, -1).toUpperCase()} (${(err as Error).message}): check http:// against https://`, code);
  }
  return err;
}

/** The names of the certificate a TLS server presents (unverified: only to say what it holds). */
function peerNames(base: URL): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: base.hostname, port: Number(base.port || 443), servername: /^[\d.:[\]]+$/.test(base.hostname) ? undefined : base.hostname, rejectUnauthorized: false }, () => {
      const cert = socket.getPeerCertificate();
      socket.destroy();
      resolve(namesOf(cert.subjectaltname, cert.subject?.CN === undefined ? undefined : String(cert.subject.CN)));
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('timed out')));
    socket.on('error', reject);
  });
}
