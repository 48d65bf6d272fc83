/**
 * The cluster secret: one random value every node and every writing client of a cluster shares.
 * Nothing sends it anywhere; each use gets its own key derived from it (HMAC-SHA256 of the secret
 * over a purpose label), so a key that leaks through one use (ZooKeeper's digest password crosses
 * ZooKeeper's wire, which is plaintext unless the operator runs ZooKeeper with TLS) yields nothing
 * for the others (signing job code, the node channel).
 *
 * Rotation: a secret file may hold several secrets, one a line. The first is the current one (it
 * signs and its keys are presented first); the others are still accepted (their ZooKeeper
 * credentials are presented too, their signatures verify) until every process has the new file and
 * the coordination tree has been given the new access list (docs/security.md, "Rotating the secret").
 *
 * A monitor credential (`tidepool-monitor:…`, derived from a secret) is the read-only form: it reads
 * the coordination tree and can neither write there, nor sign, nor join.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The shortest secret accepted (bytes of its text): 128 bits if the text is random bytes, more as base64. */
export const MIN_SECRET_BYTES = 16;
/** What a monitor credential's text starts with. */
export const MONITOR_PREFIX = 'tidepool-monitor:';

/** Where keys are derived for: each purpose has its own key (the label is bound into the HMAC). */
export type SecretPurpose = 'zookeeper-digest' | 'monitor' | 'code-signature';

/** What may be given wherever a secret is taken: an object, one secret's bytes, or a secret file's text. */
export type SecretInput = ClusterSecret | Uint8Array | string;

export class ClusterSecret {
  private constructor(
    /** 'cluster': the secret itself; 'monitor': only the read-only monitor credential. */
    readonly access: 'cluster' | 'monitor',
    /** cluster: the secrets, current first; monitor: the credential's password. */
    private readonly values: readonly Buffer[],
  ) {}

  /** A fresh random secret (32 bytes, as base64url text like the ones `tidepool secret new` prints). */
  static random(): ClusterSecret {
    return new ClusterSecret('cluster', [Buffer.from(ClusterSecret.newText())]);
  }

  /** The text of a new random secret (base64url of 32 random bytes). */
  static newText(): string {
    return randomBytes(32).toString('base64url');
  }

  /**
   * A secret from what a caller has: a ClusterSecret as is; bytes as one secret, whatever they hold
   * (`randomBytes(32)` will do); text as a secret file's content (one secret a line, the current one
   * first; or one monitor credential). `where` names the source in errors (a file, a variable, an option).
   */
  static from(input: SecretInput, where = 'the cluster secret'): ClusterSecret {
    if (input instanceof ClusterSecret) return input;
    if (typeof input === 'string') return ClusterSecret.parse(input, where);
    if (input.byteLength < MIN_SECRET_BYTES) throw new Error(`${where} holds ${input.byteLength} bytes; a cluster secret needs at least ${MIN_SECRET_BYTES}`);
    return new ClusterSecret('cluster', [Buffer.from(input)]);
  }

  /** Parses a secret file's content; throws an Error naming `where` and the line at fault. */
  static parse(text: string, where: string): ClusterSecret {
    const lines = text.split(/\r?\n/).map((l) => l.trim());
    const used = lines.map((l, i) => ({ line: i + 1, text: l })).filter((l) => l.text !== '');
    if (used.length === 0) throw new Error(`${where} is empty: it must hold the cluster secret (at least ${MIN_SECRET_BYTES} bytes)`);
    if (used[0]!.text.startsWith(MONITOR_PREFIX)) {
      if (used.length > 1) throw new Error(`${where}: a monitor credential stands alone (line ${used[1]!.line} holds more)`);
      const password = used[0]!.text.slice(MONITOR_PREFIX.length);
      if (!/^[A-Za-z0-9_-]{43}$/.test(password)) throw new Error(`${where}: line ${used[0]!.line} is not a monitor credential (${MONITOR_PREFIX} and 43 base64url characters)`);
      return new ClusterSecret('monitor', [Buffer.from(password)]);
    }
    for (const l of used) {
      if (l.text.startsWith(MONITOR_PREFIX)) throw new Error(`${where}: line ${l.line} is a monitor credential; it cannot be listed with secrets`);
      const bytes = Buffer.byteLength(l.text);
      if (bytes < MIN_SECRET_BYTES) throw new Error(`${where}: line ${l.line} holds ${bytes} bytes; a cluster secret needs at least ${MIN_SECRET_BYTES}`);
    }
    return new ClusterSecret('cluster', used.map((l) => Buffer.from(l.text)));
  }

  /** Whether this is the secret itself (it may write, sign and join), not a monitor credential. */
  get isSecret(): boolean {
    return this.access === 'cluster';
  }

  /** The current secret's bytes (for the node channel); a monitor credential has none. */
  get current(): Buffer {
    return this.secrets()[0]!;
  }

  /** Every accepted secret, current first (more than one only while rotating). */
  get accepted(): readonly Buffer[] {
    return this.secrets();
  }

  /** The current secret's key for `purpose`. */
  key(purpose: SecretPurpose): Buffer {
    return deriveKey(this.current, purpose);
  }

  /** The key for `purpose` of every accepted secret, current first. */
  keys(purpose: SecretPurpose): Buffer[] {
    return this.secrets().map((s) => deriveKey(s, purpose));
  }

  /**
   * The password of the monitor credential: derived from the current secret, or the credential's own.
   * `monitorPasswords` gives every accepted one (an access list names them all while rotating).
   */
  monitorPassword(): string {
    return this.access === 'monitor' ? this.values[0]!.toString() : this.key('monitor').toString('base64url');
  }

  monitorPasswords(): string[] {
    return this.access === 'monitor' ? [this.monitorPassword()] : this.keys('monitor').map((k) => k.toString('base64url'));
  }

  /** The text of the read-only monitor credential (what `tidepool secret monitor` prints). */
  monitorCredential(): string {
    return `${MONITOR_PREFIX}${this.monitorPassword()}`;
  }

  /** HMAC-SHA256 of `bytes` under the current secret's key for `purpose`. */
  sign(purpose: SecretPurpose, bytes: Uint8Array): Buffer {
    return createHmac('sha256', this.key(purpose)).update(bytes).digest();
  }

  /** Whether `mac` is the HMAC of `bytes` under the key for `purpose` of any accepted secret (constant time per key). */
  verify(purpose: SecretPurpose, bytes: Uint8Array, mac: Uint8Array): boolean {
    let ok = false;
    for (const key of this.keys(purpose)) {
      const expected = createHmac('sha256', key).update(bytes).digest();
      if (expected.length === mac.length && timingSafeEqual(expected, mac)) ok = true;
    }
    return ok;
  }

  /** Never shows the secret (logs, errors, util.inspect). */
  toString(): string {
    return this.access === 'monitor' ? '[tidepool monitor credential]' : `[tidepool cluster secret${this.values.length > 1 ? `s (${this.values.length})` : ''}]`;
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  toJSON(): string {
    return this.toString();
  }

  private secrets(): readonly Buffer[] {
    if (this.access !== 'cluster') throw new Error('a monitor credential only reads: this needs the cluster secret (--secret-file or TIDEPOOL_SECRET)');
    return this.values;
  }
}

function deriveKey(secret: Buffer, purpose: SecretPurpose): Buffer {
  return createHmac('sha256', secret).update(`tidepool/v1/${purpose}`).digest();
}
