/**
 * Captured bulk data by content (data shipped once): a typed array, an ArrayBuffer or an array of
 * primitives of at least BLOB_MIN_BYTES travels as a blob named by its SHA-256, which a service keeps
 * for the connection, so a later batch over the same data sends only the hash. The client keeps, per
 * connection, the last bytes and hash of each such value (`ContentBlobs`): capturing it again compares
 * the bytes (a memcmp) instead of hashing them again, and gives the same copy, immune to writes the
 * program makes after `start`.
 */
import { hashOf } from '../../data/content-hash.js';

/** Captured values at least this large (bytes, or characters of their encoded elements) travel as blobs. */
export const BLOB_MIN_BYTES = 1024;
/** Copies kept for the comparison, per connection; beyond, values are hashed on every capture. */
const MAX_KEPT_BYTES = 512 * 1024 * 1024;

/** A blob of a batch: its hash and bytes (a copy owned by the capture). */
export interface ContentBlob {
  hash: string;
  bytes: Uint8Array;
}

/** Counters of the per-connection capture cache. */
export interface ContentBlobStats {
  /** Values hashed afresh (first capture, or changed since). */
  hashed: number;
  /** Values found unchanged since their last capture: their hash and copy were reused. */
  reused: number;
}

export class ContentBlobs {
  readonly stats: ContentBlobStats = { hashed: 0, reused: 0 };
  private readonly kept = new WeakMap<object, ContentBlob>();
  private keptBytes = 0;

  /** The blob of a typed array's or ArrayBuffer's bytes (`view` is a view of them). */
  ofBytes(owner: object, view: Uint8Array): ContentBlob {
    const last = this.kept.get(owner);
    if (last && last.bytes.length === view.length && Buffer.compare(last.bytes, view) === 0) {
      this.stats.reused++;
      return last;
    }
    const bytes = view.slice();
    return this.keep(owner, { hash: hashOf(bytes), bytes }, last);
  }

  /** The blob of a text (an array's encoded elements); `owner` is the array. */
  ofText(owner: object, text: string): ContentBlob {
    const bytes = Buffer.from(text, 'utf8');
    const last = this.kept.get(owner);
    if (last && last.bytes.length === bytes.length && Buffer.compare(last.bytes, bytes) === 0) {
      this.stats.reused++;
      return last;
    }
    return this.keep(owner, { hash: hashOf(bytes), bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) }, last);
  }

  private keep(owner: object, blob: ContentBlob, last: ContentBlob | undefined): ContentBlob {
    this.stats.hashed++;
    if (last || this.keptBytes + blob.bytes.length <= MAX_KEPT_BYTES) {
      this.keptBytes += blob.bytes.length - (last?.bytes.length ?? 0);
      this.kept.set(owner, blob);
    }
    return blob;
  }
}
