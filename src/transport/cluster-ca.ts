/**
 * The cluster's certificate authority, derived from the cluster secret: every holder of the secret
 * computes the same Ed25519 CA key (scrypt of the secret) and the same self-signed CA certificate,
 * so nothing is generated, stored or distributed beside the secret itself. Each node process makes a
 * fresh Ed25519 key at start and issues itself a certificate that names its node id
 * (`urn:tidepool:node:<id>` in its subjectAltName), signed by that CA. Peers then run ordinary
 * mutual TLS 1.3 (channel-credentials.ts, tcp-connection.ts). docs/security.md ("The node channel") says why this and not TLS-PSK.
 *
 * A holder of the secret can issue a certificate for any node id: within a cluster that shares one
 * secret, every node is trusted alike (as it is for the coordination service). Operators who want
 * each node's identity to be its own key supply certificates from their own PKI instead.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, scryptSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { bitString, boolean, explicit, implicit, integer, namedBits, octetString, oid, sequence, set, time, utf8String } from './der.js';

/** The URI a node's certificate carries in its subjectAltName, before the (percent-encoded) node id. */
export const NODE_URI_PREFIX = 'urn:tidepool:node:';

const OID = {
  ed25519: '1.3.101.112',
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

/** The PKCS#8 encoding of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** Certificates here do not expire: the secret is what is rotated (see docs/security.md). */
const NOT_BEFORE = new Date(Date.UTC(2020, 0, 1));
const NOT_AFTER = new Date(Date.UTC(9999, 11, 31, 23, 59, 59));
/** scrypt cost: ~16 MiB and some tens of milliseconds once per secret and process, against guessing a weak secret offline. */
const SCRYPT = { N: 1 << 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;
const KDF_SALT = 'tidepool node channel: cluster certificate authority, v1';

export interface ClusterAuthority {
  /** The CA certificate (PEM), the same on every holder of the secret. */
  certificate: string;
  /** SHA-256 fingerprint of the CA certificate (as X509Certificate.fingerprint256 prints it). */
  fingerprint256: string;
  /** A short name of this CA for logs: "tidepool cluster <12 hex digits of its key's hash>". */
  name: string;
  key: KeyObject;
  keyIdentifier: Buffer;
}

export interface NodeCertificate {
  /** PEM of the node's certificate, and of its private key (PKCS#8). */
  certificate: string;
  key: string;
}

const authorities = new Map<string, ClusterAuthority>();

/** The CA of the cluster whose secret is `secret` (computed once per secret and process). */
export function clusterAuthority(secret: Buffer): ClusterAuthority {
  const memo = createHash('sha256').update('memo').update(secret).digest('hex');
  const known = authorities.get(memo);
  if (known) return known;
  const seed = scryptSync(secret, KDF_SALT, 32, SCRYPT);
  const key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const keyIdentifier = keyIdOf(spki);
  const name = `tidepool cluster ${keyIdentifier.subarray(0, 6).toString('hex')}`;
  const subject = distinguishedName(name);
  const tbs = tbsCertificate({
    // Deterministic (Ed25519 signatures are too): every holder derives the very same certificate.
    serial: positiveSerial(createHash('sha256').update('serial').update(spki).digest()),
    issuer: subject,
    subject,
    spki,
    extensions: [
      extension(OID.basicConstraints, true, sequence(boolean(true), integer(0))),
      extension(OID.keyUsage, true, namedBits([5, 6])), // keyCertSign, cRLSign
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdentifier)),
    ],
  });
  const certificate = toPem(signed(tbs, key));
  const authority = { certificate, fingerprint256: new X509Certificate(certificate).fingerprint256, name, key, keyIdentifier };
  authorities.set(memo, authority);
  return authority;
}

/** A certificate for node `nodeId` on a fresh key, issued by `ca`. */
export function issueNodeCertificate(ca: ClusterAuthority, nodeId: string): NodeCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  const tbs = tbsCertificate({
    serial: positiveSerial(randomBytes(16)),
    issuer: distinguishedName(ca.name),
    subject: distinguishedName('tidepool node'),
    spki,
    extensions: [
      extension(OID.basicConstraints, true, sequence()),
      extension(OID.keyUsage, true, namedBits([0])), // digitalSignature
      extension(OID.extKeyUsage, false, sequence(oid(OID.serverAuth), oid(OID.clientAuth))),
      extension(OID.subjectAltName, false, sequence(implicit(6, Buffer.from(nodeUri(nodeId), 'ascii')))),
      extension(OID.subjectKeyIdentifier, false, octetString(keyIdOf(spki))),
      extension(OID.authorityKeyIdentifier, false, sequence(implicit(0, ca.keyIdentifier))),
    ],
  });
  return { certificate: toPem(signed(tbs, ca.key)), key: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string };
}

/** "urn:tidepool:node:<id>", the id percent-encoded so that the URI is plain ASCII. */
export function nodeUri(nodeId: string): string {
  return NODE_URI_PREFIX + encodeURIComponent(nodeId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The node id a certificate names (its one `urn:tidepool:node:` subjectAltName URI), or why it names none.
 */
export function nodeIdOf(cert: X509Certificate): { nodeId: string } | { error: string } {
  const names = (cert.subjectAltName ?? '').split(', ').filter((n) => n.startsWith(`URI:${NODE_URI_PREFIX}`));
  if (names.length !== 1) {
    return { error: names.length === 0 ? `the certificate names no node (no subjectAltName URI ${NODE_URI_PREFIX}<id>)` : 'the certificate names more than one node' };
  }
  const encoded = names[0]!.slice(`URI:${NODE_URI_PREFIX}`.length);
  try {
    if (!/^[A-Za-z0-9._~%-]+$/.test(encoded)) throw new URIError('unexpected characters');
    return { nodeId: decodeURIComponent(encoded) };
  } catch {
    return { error: `the certificate's node URI ${JSON.stringify(names[0]!.slice(4, 200))} is not a percent-encoded node id` };
  }
}

function keyIdOf(spki: Buffer): Buffer {
  return createHash('sha256').update(spki).digest().subarray(0, 20);
}

function positiveSerial(bytes: Buffer): Buffer {
  const serial = Buffer.from(bytes.subarray(0, 16));
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive, and no leading zero byte to strip
  return serial;
}

function distinguishedName(commonName: string): Buffer {
  return sequence(
    set(sequence(oid(OID.organization), utf8String('tidepool'))),
    set(sequence(oid(OID.commonName), utf8String(commonName))),
  );
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return critical ? sequence(oid(id), boolean(true), octetString(value)) : sequence(oid(id), octetString(value));
}

function tbsCertificate(fields: { serial: Buffer; issuer: Buffer; subject: Buffer; spki: Buffer; extensions: Buffer[] }): Buffer {
  return sequence(
    explicit(0, integer(2)), // v3
    integer(fields.serial),
    sequence(oid(OID.ed25519)),
    fields.issuer,
    sequence(time(NOT_BEFORE), time(NOT_AFTER)),
    fields.subject,
    fields.spki,
    explicit(3, sequence(...fields.extensions)),
  );
}

function signed(tbs: Buffer, key: KeyObject): Buffer {
  return sequence(tbs, sequence(oid(OID.ed25519)), bitString(sign(null, tbs, key)));
}

function toPem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g)!;
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
