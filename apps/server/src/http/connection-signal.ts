import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';

/**
 * The cancellation signal of the inference requests a connection carries: aborted when the
 * connection closes. An HTTP/1.1 response can only close unfinished with its connection (the client
 * went away, or the server destroyed the socket), so one signal per connection cancels exactly the
 * requests whose answers can no longer be delivered; a request answered before that has already
 * let go of it. One per connection rather than per request: creating an AbortSignal costs ~2 us of
 * main-thread CPU, more than parsing the request's JSON header.
 */
const connectionSignals = new WeakMap<Socket, AbortSignal>();

export function connectionSignal(socket: Socket): AbortSignal {
  let signal = connectionSignals.get(socket);
  if (!signal) {
    const controller = new AbortController();
    signal = controller.signal;
    // Pipelined requests each listen (request guard, scheduler, instance): no leak warning for them.
    setMaxListeners(0, signal);
    socket.once('close', () => controller.abort());
    connectionSignals.set(socket, signal);
  }
  return signal;
}
