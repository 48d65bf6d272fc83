/**
 * A canonical byte encoding of plain data, for MACs over structured values: equal values encode to
 * equal bytes whatever the order of their object keys, and different values to different bytes.
 * An object key whose value is undefined counts as absent ({a: undefined} encodes as {}).
 *
 * Every value is a one-byte tag and a self-delimiting body (lengths are 32-bit big-endian), so no
 * two values share an encoding. Object keys are sorted by their UTF-16 code units, Map entries and
 * Set members by their encoded bytes. Covered: what the runtime's MessagePack codec carries
 * (null, undefined, booleans, numbers, bigints, strings, Uint8Array/Buffer and the other typed
 * arrays, arrays, plain objects, Maps, Sets, Dates); anything else throws, naming where it is.
 */

const TYPED_ARRAYS = new Map<string, number>([
  ['Int8Array', 1], ['Uint8ClampedArray', 2], ['Int16Array', 3], ['Uint16Array', 4], ['Int32Array', 5],
  ['Uint32Array', 6], ['Float32Array', 7], ['Float64Array', 8], ['BigInt64Array', 9], ['BigUint64Array', 10],
]);

const TAG = {
  null: 0x6e, undefined: 0x75, true: 0x74, false: 0x66, number: 0x64, bigint: 0x69, string: 0x73, bytes: 0x62,
  typed: 0x79, date: 0x44, array: 0x61, map: 0x6d, set: 0x53, object: 0x6f,
} as const;

/** One growing buffer: values are written in place, not as a list of small buffers. */
class Writer {
  private buf = Buffer.allocUnsafe(1024);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }

  u32(n: number): void {
    this.room(4);
    this.buf.writeUInt32BE(n, this.at);
    this.at += 4;
  }

  double(tag: number, x: number): void {
    this.room(9);
    this.buf[this.at] = tag;
    this.buf.writeDoubleBE(x, this.at + 1);
    this.at += 9;
  }

  /** A tag, a length and UTF-8 text. */
  text(tag: number, s: string): void {
    const n = Buffer.byteLength(s);
    this.room(5 + n);
    this.buf[this.at] = tag;
    this.buf.writeUInt32BE(n, this.at + 1);
    this.buf.write(s, this.at + 5, 'utf8');
    this.at += 5 + n;
  }

  /** A length and the bytes. */
  bytes(b: Uint8Array): void {
    this.u32(b.byteLength);
    this.raw(b);
  }

  /** Bytes as they are (an encoding, self-delimiting already). */
  raw(b: Uint8Array): void {
    this.room(b.byteLength);
    this.buf.set(b, this.at);
    this.at += b.byteLength;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}

export function canonicalBytes(value: unknown): Buffer {
  const w = new Writer();
  write(value, w, '$');
  return w.done();
}

function write(value: unknown, w: Writer, where: string): void {
  if (value === null) return w.byte(TAG.null);
  if (value === undefined) return w.byte(TAG.undefined);
  switch (typeof value) {
    case 'boolean': return w.byte(value ? TAG.true : TAG.false);
    // One NaN; 0 and -0 stay apart (they are different values to a program).
    case 'number': return w.double(TAG.number, Number.isNaN(value) ? NaN : value);
    case 'bigint': return w.text(TAG.bigint, value.toString());
    case 'string': return w.text(TAG.string, value);
    case 'object': break;
    default: throw new TypeError(`cannot encode a ${typeof value} canonically (at ${where})`);
  }
  if (value instanceof Uint8Array) {
    w.byte(TAG.bytes);
    return w.bytes(value);
  }
  if (ArrayBuffer.isView(value)) {
    const kind = TYPED_ARRAYS.get(value.constructor.name);
    if (kind === undefined) throw new TypeError(`cannot encode a ${value.constructor.name} canonically (at ${where})`);
    w.byte(TAG.typed);
    w.byte(kind);
    return w.bytes(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
  }
  if (value instanceof Date) return w.double(TAG.date, value.getTime());
  if (Array.isArray(value)) {
    w.byte(TAG.array);
    w.u32(value.length);
    for (let i = 0; i < value.length; i++) write(value[i], w, `${where}[${i}]`);
    return;
  }
  if (value instanceof Map || value instanceof Set) {
    // Entries in the order of their encodings: each is encoded apart, then sorted.
    const parts = value instanceof Map
      ? [...value].map(([k, v], i) => Buffer.concat([canonicalAt(k, `${where} key #${i}`), canonicalAt(v, `${where}.get(#${i})`)]))
      : [...value].map((v, i) => canonicalAt(v, `${where}{#${i}}`));
    parts.sort(Buffer.compare);
    w.byte(value instanceof Map ? TAG.map : TAG.set);
    w.u32(parts.length);
    for (const p of parts) w.raw(p);
    return;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(`cannot encode a ${(value as object).constructor?.name ?? 'non-plain object'} canonically (at ${where})`);
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort();
  w.byte(TAG.object);
  w.u32(keys.length);
  for (const k of keys) {
    w.text(TAG.string, k);
    write(record[k], w, `${where}.${k}`);
  }
}

function canonicalAt(value: unknown, where: string): Buffer {
  const w = new Writer();
  write(value, w, where);
  return Buffer.from(w.done());
}
