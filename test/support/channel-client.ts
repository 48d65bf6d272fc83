/**
 * Test support: a raw client of the node channel. It holds channel credentials (the secret's, or any
 * given), runs the real TLS handshake and waits for the server's answer, then hands the test the TLS
 * socket to write raw frame bytes on: a broken or hostile node that knows the secret.
 */
import tls from 'node:tls';
import { channelCredentials, type ChannelSource } from '../../src/transport/channel-credentials.js';
import { FrameDecoder } from '../../src/transport/frame-codec.js';
import { ChannelTypes } from '../../src/transport/tcp-connection.js';
import { withDeadline } from './wait.js';

export interface ChannelClient {
  socket: tls.TLSSocket;
  closed: Promise<void>;
}

/** Connects to 127.0.0.1:`port` as `nodeId` and resolves once the server admitted it (rejects with the refusal otherwise). */
export async function admittedClient(port: number, nodeId: string, source: ChannelSource): Promise<ChannelClient> {
  const credentials = channelCredentials(nodeId, source);
  const socket = tls.connect({ host: '127.0.0.1', port, secureContext: credentials.secureContext, rejectUnauthorized: false, checkServerIdentity: () => undefined });
  socket.on('error', () => undefined); // a reset is one way of being disconnected
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const decoder = new FrameDecoder({ maxFrameBytes: 4096 });
  await withDeadline(new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      for (const m of decoder.push(chunk)) {
        socket.off('data', onData);
        if (m.type === ChannelTypes.ready) resolve();
        else reject(new Error(`not admitted: ${JSON.stringify(m)}`));
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed before an answer')));
  }), 'the channel to admit the client', 10_000);
  return { socket, closed };
}
