/** Node-to-node messaging: the Transport contract and its in-process and TCP implementations. */
export type { Message, MessageHandler, PeerAddress, Transport } from './types.js';
export { TransportError } from './types.js';
export { InProcessNetwork, InProcessTransport } from './in-process-transport.js';
export { TcpTransport } from './tcp-transport.js';
export type { TcpTransportEvents, TcpTransportOptions } from './tcp-transport.js';
export { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, FrameError } from './frame-codec.js';
export type { FrameDecoderOptions } from './frame-codec.js';
export { HandshakeError } from './handshake.js';
