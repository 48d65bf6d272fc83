import { Packr } from 'msgpackr';

/**
 * The binary encoding of task state, checkpoints and result contributions in the coordination
 * service (and of transport frames): MessagePack via msgpackr, which keeps Buffers, typed arrays,
 * Maps, Sets, Dates and bigints intact.
 */
// Records keep plain objects as objects while Maps stay Maps; a fresh decoder needs no shared structures.
const packr = new Packr({ useRecords: true, mapsAsObjects: false, moreTypes: true });

export function encode(value: unknown): Buffer {
  return packr.pack(value);
}

export function decode<T = unknown>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}
