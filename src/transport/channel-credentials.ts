/**
 * What a node shows and whom it trusts on the node channel (mutual TLS 1.3 between nodes), from
 * either source:
 *
 * - the cluster secret(s) (the default: nothing for the operator to manage): the node presents a
 *   certificate issued by the CA derived from its current secret (cluster-ca.ts) and trusts the CAs
 *   of every secret it holds: the current one and, during a rotation, the ones being retired;
 * - the operator's PKI: a certificate and key of the node's own, and the CA certificates to trust.
 *
 * Either way a peer is admitted when its certificate chains to a trusted CA and names one node id
 * (`urn:tidepool:node:<id>` in its subjectAltName): that id is the connection's sender.
 */
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { clusterAuthority, issueNodeCertificate, nodeIdOf } from './cluster-ca.js';
import { TransportError } from './types.js';

/** Where a node's channel credentials come from. */
export type ChannelSource =
  /** Cluster secrets: the first is presented, every one is trusted (more than one during a rotation). */
  | { secrets: ReadonlyArray<Buffer | string> }
  /** The operator's PKI, PEM text: this node's certificate (chain) and key, and the CA certificates peers must chain to. */
  | { cert: string; key: string; ca: string };

/** TLS 1.3 only (both ends are tidepool); AES-128-GCM first: the fastest with AES instructions, and ample. */
const TLS_OPTIONS = {
  minVersion: 'TLSv1.3',
  maxVersion: 'TLSv1.3',
  // Node takes TLS 1.3 suites in `ciphers`.
  ciphers: 'TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256',
} as const satisfies tls.SecureContextOptions;

export interface ChannelCredentials {
  readonly nodeId: string;
  /** For tls.connect and tls.Server#setSecureContext. */
  readonly tlsOptions: tls.SecureContextOptions;
  readonly secureContext: tls.SecureContext;
  /** SHA-256 fingerprints of the trusted CA certificates. */
  readonly trusted: ReadonlySet<string>;
  /** For logs: "presents <issuer>; trusts <CA>, <CA>" (names only, never a secret). */
  readonly summary: string;
}

export type PeerCheck = { ok: true; nodeId: string; chain: string[] } | { ok: false; reason: string };

/** A cluster secret as bytes (a string is taken as UTF-8); it must not be empty. */
export function secretBytes(secret: Buffer | string): Buffer {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new TypeError('the cluster secret must be a non-empty string or Buffer');
  return bytes;
}

/** Builds a node's credentials; throws TransportError naming what is wrong with them. */
export function channelCredentials(nodeId: string, source: ChannelSource): ChannelCredentials {
  if ('secrets' in source) {
    if (source.secrets.length === 0) throw new TransportError('the node channel needs at least one cluster secret', nodeId);
    const authorities = source.secrets.map((s) => clusterAuthority(secretBytes(s)));
    const own = issueNodeCertificate(authorities[0]!, nodeId);
    const unique = [...new Map(authorities.map((a) => [a.fingerprint256, a])).values()];
    return build(nodeId, { cert: own.certificate, key: own.key, ca: unique.map((a) => a.certificate) },
      unique.map((a) => a.fingerprint256), `presents ${authorities[0]!.name}; trusts ${unique.map((a) => a.name).join(', ')}`);
  }
  const anchors = pemCertificates(source.ca, 'the CA certificates (--tls-ca)');
  const chain = pemCertificates(source.cert, 'the node certificate (--tls-cert)');
  const named = nodeIdOf(chain[0]!);
  if ('error' in named) throw new TransportError(`the node certificate (--tls-cert): ${named.error}`, nodeId);
  if (named.nodeId !== nodeId) throw new TransportError(`the node certificate (--tls-cert) names node ${JSON.stringify(named.nodeId)}, not this node (${JSON.stringify(nodeId)})`, nodeId);
  return build(nodeId, { cert: source.cert, key: source.key, ca: anchors.map((c) => c.toString()) },
    anchors.map((c) => c.fingerprint256), `presents a certificate from ${chain[0]!.issuer.replace(/\n/g, ', ')}; trusts ${anchors.map((c) => c.subject.replace(/\n/g, ', ')).join(' | ')}`);
}

/** The node id a PEM certificate names (the first certificate of `pem`), for a node that takes its id from its certificate. */
export function nodeIdOfCertificate(pem: string, what = 'the node certificate (--tls-cert)'): string {
  const named = nodeIdOf(pemCertificates(pem, what)[0]!);
  if ('error' in named) throw new TransportError(`${what}: ${named.error}`);
  return named.nodeId;
}

function build(nodeId: string, pem: { cert: string; key: string; ca: string[] }, trusted: string[], summary: string): ChannelCredentials {
  const tlsOptions: tls.SecureContextOptions = { ...TLS_OPTIONS, ...pem };
  let secureContext: tls.SecureContext;
  try {
    secureContext = tls.createSecureContext(tlsOptions);
  } catch (err) {
    throw new TransportError(`the node channel's certificate, key or CA certificates are unusable: ${(err as Error).message}`, nodeId);
  }
  return { nodeId, tlsOptions, secureContext, trusted: new Set(trusted), summary };
}

function pemCertificates(text: string, what: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new TransportError(`${what}: no PEM certificate (-----BEGIN CERTIFICATE-----) found`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new TransportError(`${what}: certificate ${i + 1} cannot be read: ${(err as Error).message}`);
    }
  });
}

/**
 * Checks the peer of a TLS socket whose handshake finished (with rejectUnauthorized off, so that the
 * reason can be told): its certificate must chain to a trusted CA and name one node id.
 */
export function checkPeer(socket: tls.TLSSocket): PeerCheck {
  // One call for the whole chain: on Node 20, getPeerX509Certificate() leaves later peer-certificate calls empty.
  const detailed = socket.getPeerCertificate(true);
  if (!detailed?.raw) return { ok: false, reason: 'the peer presented no certificate' };
  const cert = new X509Certificate(detailed.raw);
  if (!socket.authorized) {
    const error = String(socket.authorizationError ?? 'unknown error');
    const hint = /UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY_LEAF|SELF_SIGNED|CERT_SIGNATURE_FAILURE/.test(error)
      ? ' (not issued by a CA this node trusts: another cluster secret, or one retired by a rotation?)'
      : '';
    return { ok: false, reason: `certificate from ${cert.issuer.replace(/\n/g, ', ')} refused: ${error}${hint}` };
  }
  const named = nodeIdOf(cert);
  if ('error' in named) return { ok: false, reason: named.error };
  return { ok: true, nodeId: named.nodeId, chain: chainOf(detailed) };
}

/** SHA-256 fingerprints of a verified chain, leaf first. */
function chainOf(leaf: tls.DetailedPeerCertificate): string[] {
  const out: string[] = [];
  for (let cert: tls.DetailedPeerCertificate | undefined = leaf; cert?.fingerprint256 && !out.includes(cert.fingerprint256); cert = cert.issuerCertificate) {
    out.push(cert.fingerprint256);
  }
  return out;
}

/** Whether a peer verified with chain `chain` is still trusted by `credentials` (after a rotation). */
export function stillTrusted(chain: readonly string[], credentials: ChannelCredentials): boolean {
  return chain.some((fp) => credentials.trusted.has(fp));
}

/** A short, non-secret name of a secret for logs: the name of the CA it derives. */
export function secretName(secret: Buffer | string): string {
  return clusterAuthority(secretBytes(secret)).name;
}

