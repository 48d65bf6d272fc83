/**
 * A DER writer for the few ASN.1 types an X.509 certificate needs (cluster-ca.ts): each function
 * returns the complete encoding (tag, length, content) of one value. Write-only: certificates are
 * read back with node:crypto's X509Certificate and verified by OpenSSL. docs/dependencies.md says why
 * this is written here rather than taken from a library.
 */

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  sequence: 0x30,
  set: 0x31,
  utcTime: 0x17,
  generalizedTime: 0x18,
} as const;

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One value with tag `tag` and content `content`. */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), lengthBytes(content.length), content]);
}

export function sequence(...items: Buffer[]): Buffer {
  return tlv(TAG.sequence, Buffer.concat(items));
}

export function set(...items: Buffer[]): Buffer {
  return tlv(TAG.set, Buffer.concat(items));
}

export function boolean(value: boolean): Buffer {
  return tlv(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
}

/** A non-negative INTEGER from its big-endian magnitude (a small number or bytes). */
export function integer(value: number | Buffer): Buffer {
  if (typeof value === 'number' && (!Number.isSafeInteger(value) || value < 0)) throw new RangeError(`DER integer: ${value} is not a safe non-negative integer`);
  const hex = typeof value === 'number' ? value.toString(16) : '';
  let bytes = typeof value === 'number' ? Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex') : value;
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1]! < 0x80) start++;
  bytes = bytes.subarray(start);
  if (bytes.length === 0) bytes = Buffer.from([0]);
  if (bytes[0]! >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return tlv(TAG.integer, bytes);
}

/** An OBJECT IDENTIFIER from its dotted form ("2.5.4.3"). */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new RangeError(`DER object identifier: bad arc in ${dotted}`);
    return Number(a);
  });
  if (arcs.length < 2 || arcs[0]! > 2) throw new RangeError(`DER object identifier: ${dotted} needs at least two arcs, the first 0-2`);
  const out: number[] = [];
  const base128 = (v: number): void => {
    const chunk: number[] = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) chunk.unshift(0x80 | (x & 0x7f));
    out.push(...chunk);
  };
  base128(arcs[0]! * 40 + arcs[1]!);
  for (const arc of arcs.slice(2)) base128(arc);
  return tlv(TAG.oid, Buffer.from(out));
}

export function utf8String(text: string): Buffer {
  return tlv(TAG.utf8String, Buffer.from(text, 'utf8'));
}

export function octetString(bytes: Buffer): Buffer {
  return tlv(TAG.octetString, bytes);
}

/** A BIT STRING of whole bytes, or of named bits (`unusedBits` trailing bits of the last byte unused). */
export function bitString(bytes: Buffer, unusedBits = 0): Buffer {
  return tlv(TAG.bitString, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

/** A BIT STRING of named bits (KeyUsage): bit 0 is the most significant bit of the first byte; DER drops trailing zero bits. */
export function namedBits(bits: number[]): Buffer {
  const highest = Math.max(...bits);
  const bytes = Buffer.alloc(Math.floor(highest / 8) + 1);
  for (const bit of bits) bytes[bit >> 3]! |= 0x80 >> (bit & 7);
  return bitString(bytes, 7 - (highest & 7));
}

/** A time as X.509 wants it: UTCTime before 2050, GeneralizedTime from 2050 on (RFC 5280, 4.1.2.5). */
export function time(date: Date): Buffer {
  const iso = date.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return date.getUTCFullYear() < 2050
    ? tlv(TAG.utcTime, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(TAG.generalizedTime, Buffer.from(digits, 'ascii'));
}

/** A context-specific constructed value, [n] EXPLICIT. */
export function explicit(n: number, value: Buffer): Buffer {
  return tlv(0xa0 | n, value);
}

/** A context-specific primitive value, [n] IMPLICIT (e.g. a GeneralName's uniformResourceIdentifier is [6]). */
export function implicit(n: number, content: Buffer): Buffer {
  return tlv(0x80 | n, content);
}
