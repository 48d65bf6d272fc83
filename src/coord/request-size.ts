import { aclBytes, OPEN_ACL } from './access.js';
import { CoordError } from './errors.js';
import type { Op } from './types.js';

/**
 * ZooKeeper's limit on one client request: jute.maxbuffer, 0xfffff bytes by default (ZooKeeper 3.8,
 * `BinaryInputArchive.maxBuffer`). The server compares it with the length prefix of each incoming
 * frame — the request header plus the whole serialized request, i.e. for a multi every op's path and
 * data together — and closes the connection of a client whose frame is longer. The client sees a plain
 * connection loss and cannot tell it from a network fault, so both backends refuse such a request
 * before it is sent (verified byte-exact against a 3.8 server by the contract suite).
 */
export const MAX_REQUEST_BYTES = 0xfffff;

/** RequestHeader: xid and type (two ints). */
const REQUEST_HEADER = 8;
/** MultiHeader before each op and once at the end: type (int), done (boolean), err (int). */
const MULTI_HEADER = 9;
/** The access list a create carries when none is named: OPEN_ACL_UNSAFE (a session without credentials). */
export const OPEN_ACL_BYTES = aclBytes(OPEN_ACL);

/**
 * Serialized size of one op's record (jute: ustring and buffer are a 4-byte length plus the bytes).
 * `acl`: the serialized size of the access list a create carries (the session's: aclBytes(client.acl)).
 */
export function opRecordBytes(op: Op, acl = OPEN_ACL_BYTES): number {
  const path = 4 + Buffer.byteLength(op.path);
  switch (op.op) {
    case 'create': return path + 4 + (op.data?.byteLength ?? 0) + acl + 4;
    case 'setData': return path + 4 + op.data.byteLength + 4;
    case 'delete':
    case 'check': return path + 4;
  }
}

/**
 * The length ZooKeeper checks for this request (the frame without its 4-byte length prefix).
 * `chrootBytes`: the length of a chroot the client prepends to every path; `acl`: the serialized size
 * of the access list every create carries.
 */
export function requestBytes(ops: readonly Op[], isMulti: boolean, chrootBytes = 0, acl = OPEN_ACL_BYTES): number {
  let total = REQUEST_HEADER;
  for (const op of ops) total += opRecordBytes(op, acl) + chrootBytes + (isMulti ? MULTI_HEADER : 0);
  return isMulti ? total + MULTI_HEADER : total;
}

/** The most bytes an op's record can take besides its path, data and access list (lengths, version, flags, multi header). */
const OP_FIXED_MAX = 4 + 4 + 4 + 4 + MULTI_HEADER;

/**
 * Whether the request is at most `limit` bytes. Most requests are far below it: an upper bound that
 * needs no pass over the paths' characters (UTF-8 takes at most 3 bytes per UTF-16 unit) settles them;
 * only those near the limit are measured exactly.
 */
export function fitsRequest(ops: readonly Op[], isMulti: boolean, limit: number, chrootBytes = 0, acl = OPEN_ACL_BYTES): boolean {
  let bound = REQUEST_HEADER + MULTI_HEADER;
  const fixed = OP_FIXED_MAX + acl;
  for (const op of ops) bound += 3 * op.path.length + ('data' in op && op.data ? op.data.byteLength : 0) + chrootBytes + fixed;
  return bound <= limit || requestBytes(ops, isMulti, chrootBytes, acl) <= limit;
}

/** Throws a non-retryable BAD_ARGUMENTS naming the size and the limit when ZooKeeper would refuse the request. */
export function checkRequestSize(ops: readonly Op[], isMulti: boolean, chrootBytes = 0, limit = MAX_REQUEST_BYTES, acl = OPEN_ACL_BYTES): void {
  if (fitsRequest(ops, isMulti, limit, chrootBytes, acl)) return;
  const bytes = requestBytes(ops, isMulti, chrootBytes, acl);
  const what = isMulti ? `transaction of ${ops.length} ops` : `${ops[0]?.op ?? 'request'}`;
  throw new CoordError('BAD_ARGUMENTS', ops[0]?.path, undefined,
    `${what} is a request of ${bytes} bytes, over ZooKeeper's limit of ${limit} bytes per request (jute.maxbuffer)`);
}
