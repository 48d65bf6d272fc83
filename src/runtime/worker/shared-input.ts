/**
 * A job input that lives in shared memory (a SharedArrayBuffer from the node's object store): posted
 * to every worker without a copy. Binary input reaches tasks as a Buffer over those very bytes;
 * structured input (MessagePack) is decoded once per worker, when the worker takes the job's setup.
 */
export type SharedInputForm = 'bytes' | 'msgpack';

export class SharedInput {
  constructor(readonly bytes: Uint8Array, readonly form: SharedInputForm) {
    if (!(bytes.buffer instanceof SharedArrayBuffer)) throw new TypeError('SharedInput: bytes must be a view of a SharedArrayBuffer');
  }
}
