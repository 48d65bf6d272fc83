/** Test support: a deterministic binary job input and the sum of its bytes. */

/** A binary input of `size` bytes with a known byte sum. */
export function binaryInput(size: number): { bytes: Buffer; sum: number } {
  const bytes = Buffer.allocUnsafe(size);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, size >>> 2);
  for (let i = 0; i < words.length; i++) words[i] = Math.imul(i, 2654435761) >>> 0;
  for (let i = words.length * 4; i < size; i++) bytes[i] = i & 0xff;
  let sum = 0;
  for (let i = 0; i < size; i++) sum += bytes[i]!;
  return { bytes, sum };
}
