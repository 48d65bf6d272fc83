/** Node-to-node messaging: the Transport contract and its in-process and TCP (mutual TLS) implementations. */
export type { Message, MessageHandler, PeerAddress, Transport } from './types.js';
export { TransportError } from './types.js';
export { InProcessNetwork, InProcessTransport } from './in-process-transport.js';
export { TcpTransport } from './tcp-transport.js';
export type { TcpTransportEvents, TcpTransportOptions } from './tcp-transport.js';
export { channelCredentials, nodeIdOfCertificate } from './channel-credentials.js';
export type { ChannelCredentials, ChannelSource } from './channel-credentials.js';
export { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder, FrameError } from './frame-codec.js';
export type { FrameDecoderOptions } from './frame-codec.js';
