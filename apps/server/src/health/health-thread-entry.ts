/**
 * The health listener's thread (`--health-port`): answers Triton's /v2/health/live and
 * /v2/health/ready from its own event loop, so an operator's probes are answered while the main
 * thread is swamped (a flood of rejected requests delayed probes on the main listeners by seconds).
 * The main thread reports liveness and readiness every 250 ms; a report older than STALE_MS means
 * the main thread has stopped turning, and the server is then reported neither live nor ready.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';

interface HealthWorkerData {
  readonly address: string;
  readonly port: number;
  readonly staleMs: number;
  /** Open connections at most (connection-plan.ts). */
  readonly maxConnections: number;
}

const { address, port, staleMs, maxConnections } = workerData as HealthWorkerData;
let live = false;
let ready = false;
let reportedAt = Date.now();

parentPort!.on('message', (m: { t: 'state'; live: boolean; ready: boolean }) => {
  if (m.t !== 'state') return;
  live = m.live;
  ready = m.ready;
  reportedAt = Date.now();
});

const server = http.createServer((req, res) => {
  const path = (req.url ?? '').split('?')[0];
  const fresh = Date.now() - reportedAt < staleMs;
  let status: number;
  if (path !== '/v2/health/live' && path !== '/v2/health/ready') status = 404;
  else if (req.method !== 'GET' && req.method !== 'HEAD') status = 405;
  // Triton's answers: 200 or 400, empty body.
  else status = (path === '/v2/health/live' ? live : live && ready) && fresh ? 200 : 400;
  req.resume();
  res.writeHead(status, { 'content-length': 0 }).end();
});
server.headersTimeout = 10_000;
server.requestTimeout = 10_000;
server.maxHeadersCount = 100;
server.maxConnections = maxConnections;
server.on('error', (error: NodeJS.ErrnoException) => parentPort!.postMessage({ t: 'error', code: error.code, message: error.message }));
server.listen(port, address, () => {
  const bound = server.address();
  parentPort!.postMessage({ t: 'listening', port: typeof bound === 'object' && bound ? bound.port : port });
});
