/**
 * The health listener's thread (`--health-port`): answers Triton's /v2/health/live and
 * /v2/health/ready from its own event loop, so an operator's probes are answered while the main
 * thread is swamped (a flood of rejected requests delayed probes on the main listeners by seconds).
 * The main thread reports liveness and readiness every 250 ms; a report older than STALE_MS means
 * the main thread has stopped turning, and the server is then reported neither live nor ready.
 * It keeps the HTTP port's policy (health-thread.ts): HTTPS with its certificate, and the restricted
 * `health` header; no client certificate is asked for.
 */
import http from 'node:http';
import https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { failedRestriction, httpRestrictedMessage, type Restriction } from '../protocol/restricted.ts';

interface HealthWorkerData {
  readonly address: string;
  readonly port: number;
  readonly staleMs: number;
  /** Open connections at most (connection-plan.ts). */
  readonly maxConnections: number;
  /** `--http-restricted-api`'s `health` restriction, when there is one. */
  readonly restriction?: Restriction;
  /** `--http-use-ssl`'s certificate and key (PEM), when HTTP is HTTPS. */
  readonly tls?: { readonly cert: Uint8Array; readonly key: Uint8Array };
}

const { address, port, staleMs, maxConnections, restriction, tls } = workerData as HealthWorkerData;
let live = false;
let ready = false;
let reportedAt = Date.now();

parentPort!.on('message', (m: { t: 'state'; live: boolean; ready: boolean }) => {
  if (m.t !== 'state') return;
  live = m.live;
  ready = m.ready;
  reportedAt = Date.now();
});

const answer = (req: http.IncomingMessage, res: http.ServerResponse): void => {
  const path = (req.url ?? '').split('?')[0];
  const fresh = Date.now() - reportedAt < staleMs;
  const health = path === '/v2/health/live' || path === '/v2/health/ready';
  // Before the method check, as on the HTTP port; the same 403 and message.
  const failed = health && restriction && failedRestriction({ health: restriction }, 'health', (name) => {
    const v = req.headers[name];
    return typeof v === 'string' ? v : undefined;
  });
  if (failed) {
    req.resume();
    const body = JSON.stringify({ error: httpRestrictedMessage(failed) });
    res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    return;
  }
  let status: number;
  if (!health) status = 404;
  else if (req.method !== 'GET' && req.method !== 'HEAD') status = 405;
  // Triton's answers: 200 or 400, empty body.
  else status = (path === '/v2/health/live' ? live : live && ready) && fresh ? 200 : 400;
  req.resume();
  res.writeHead(status, { 'content-length': 0 }).end();
};
const server = tls ? https.createServer({ cert: Buffer.from(tls.cert), key: Buffer.from(tls.key) }, answer) : http.createServer(answer);
server.headersTimeout = 10_000;
server.requestTimeout = 10_000;
server.maxHeadersCount = 100;
server.maxConnections = maxConnections;
server.on('error', (error: NodeJS.ErrnoException) => parentPort!.postMessage({ t: 'error', code: error.code, message: error.message }));
server.listen(port, address, () => {
  const bound = server.address();
  parentPort!.postMessage({ t: 'listening', port: typeof bound === 'object' && bound ? bound.port : port });
});
