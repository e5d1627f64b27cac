/**
 * The HTTP transport on node:http (no framework): routing, Triton's error JSON and status mapping,
 * request decompression and response compression, limits, graceful close. The listener (connection
 * limits, TLS, backlog) is made in listener.ts.
 *
 * Compression follows Triton's rule: only a successful inference reply is compressed (however small)
 * when Accept-Encoding asks for it. Errors, metadata, config, statistics, repository and generate
 * replies are always sent as they are, so clients that send Accept-Encoding without decoding every
 * reply (tritonclient.http.aio over aiohttp) keep working.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseModelVersion } from '@tritium/core/server';
import type { TransportContext } from '../protocol/context.ts';
import { forwardHeaders } from '../protocol/header-forward.ts';
import { logServerFault, mapError, TransportError } from '../protocol/status.ts';
import { type InferResponse } from '@tritium/core';
import { traceNowNs } from '@tritium/core/trace';
import type { SampledTrace } from '../tracing/trace-manager.ts';
import { classified } from '../protocol/classification.ts';
import { compress, pickEncoding, readBody, type BodyLimit } from './body.ts';
import type { RequestAccount, RequestBudget } from '../protocol/request-budget.ts';
import { buildInferReply, checkHeaderLength, checkNotDecoupled, parseInferBody, requestFromPlan, type ParsedHttpInfer } from './infer-json.ts';
import { matchRoute, type Reply } from './routes.ts';
import { generateOnce, generateRequest, generateSpecOf, generateStream } from './generate.ts';
import { JsonParser, type JsonParserOptions } from './json-parser.ts';
import { exactJsonParts } from '../protocol/tensors.ts';
import { failedRestriction, httpRestrictedMessage, type Restrictions } from '../protocol/restricted.ts';
import type { TlsOptions } from '../protocol/tls.ts';
import type { HttpConnectionLimits } from '../protocol/limits.ts';
import { listen } from './listener.ts';
import { gracefulStop } from '../protocol/graceful-stop.ts';
import { connectionSignal } from './connection-signal.ts';
import { openAiTooLarge, type OpenAiExchange, type OpenAiRoutes } from '../openai/routes.ts';

export interface HttpTransportOptions {
  readonly address: string;
  readonly port: number;
  /** `--http-restricted-api`: categories gated behind a header. */
  readonly restricted?: Restrictions;
  /** HTTPS (`--http-use-ssl`, `--http-use-ssl-mutual`, PEM files read at start); plain HTTP when off. */
  readonly tls?: TlsOptions;
  /** `--http-headers-timeout-secs`, `--http-request-timeout-secs`, `--http-max-connections`. */
  readonly connections?: HttpConnectionLimits;
  /** Where large JSON bodies are parsed (a worker thread by default). */
  readonly json?: JsonParserOptions;
  /** `--max-buffered-request-size`: request bytes held at once, all requests of both transports together. */
  readonly budget: RequestBudget;
  /** The OpenAI-compatible routes, served for every path under `/v1/`. */
  readonly openai?: OpenAiRoutes;
  /** `--openai-port`: this listener serves the OpenAI routes only (every path is theirs). */
  readonly openaiOnly?: boolean;
}

/**
 * How long after a stop begins a kept-alive connection left unused is closed. A client in the middle
 * of a request loop sends its next request within this time and is answered with `Connection: close`
 * (a clean close); closing its connection sooner could cut that request (ECONNRESET), the keep-alive
 * race every idle close has, here left only to clients silent for the whole grace.
 */
const IDLE_CLOSE_GRACE_MS = 500;

export class HttpTransport {
  private server: http.Server | undefined;
  private boundPort = 0;
  private json: JsonParser | undefined;
  /** Connections open now. */
  private open = 0;
  /** The server is stopping: every reply closes its connection (see drain()). */
  private draining = false;
  /** Resolves once the connections left idle since the drain began have been closed. */
  private idleClosed: Promise<void> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ctx: TransportContext,
    private readonly options: HttpTransportOptions,
  ) {}

  get port(): number {
    return this.boundPort;
  }

  /** Connections open now (0 before start). */
  get openConnections(): number {
    return this.open;
  }

  async start(): Promise<number> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      // What this request's body holds of the server-wide budget, given back once its response is
      // sent or its connection closes.
      const account = this.options.budget.account();
      res.once('close', () => account.release());
      this.handle(req, res, account).catch((e) => this.sendError(req, res, e));
    };
    const server = await listen(this.options, handler, (socket) => {
      this.open++;
      socket.once('close', () => this.open--);
    });
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    return this.boundPort;
  }

  /**
   * The server is stopping (readiness is down, new inferences get 503), the listener stays up: every
   * reply from now on, refusals and answers to requests in flight alike, carries `Connection: close`,
   * so a keep-alive client reads its answer and reconnects (to another replica) instead of losing its
   * next request to a reset when the listener closes. Connections nobody uses are closed
   * IDLE_CLOSE_GRACE_MS later; each one that serves a request closes after its reply.
   */
  drain(): void {
    const server = this.server;
    if (!server || this.draining) return;
    this.draining = true;
    this.idleClosed = new Promise<void>((resolve) => {
      // Unref'd: an open connection keeps the process alive, and with none there is nothing to close.
      this.idleTimer = setTimeout(() => {
        server.closeIdleConnections();
        resolve();
      }, IDLE_CLOSE_GRACE_MS).unref();
    });
  }

  /**
   * Stops accepting, lets in-flight requests finish (up to `timeoutMs`), closes idle sockets. A
   * connection still open waits out the drain's idle grace first: Node's close() destroys every idle
   * connection at once, cutting the request a looping client is just sending.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.drain();
    this.server = undefined;
    if ((await openConnections(server)) > 0) await this.idleClosed;
    clearTimeout(this.idleTimer);
    await gracefulStop(
      (done) => {
        server.close(() => done());
        server.closeIdleConnections();
      },
      () => server.closeAllConnections(),
      timeoutMs,
    );
    await this.json?.close();
    this.json = undefined;
  }

  /** The JSON limit, never above the input limit. */
  private jsonLimit(): BodyLimit {
    const { maxJsonBytes, maxInputBytes } = this.ctx.limits;
    return maxJsonBytes < maxInputBytes ? { bytes: maxJsonBytes, json: true } : { bytes: maxInputBytes, json: false };
  }

  private get parser(): JsonParser {
    return (this.json ??= new JsonParser(this.options.json));
  }

  private async handle(req: IncomingMessage, res: ServerResponse, account: RequestAccount): Promise<void> {
    if (req.rawHeaders.length / 2 > this.ctx.limits.maxHeaderCount) {
      throw new TransportError(`too many request headers (limit ${this.ctx.limits.maxHeaderCount})`, 431);
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const method = req.method ?? 'GET';
    if (this.ctx.log.options.verbose >= 1) this.ctx.log.verbose(1, `HTTP request: ${method} ${path}`);
    const openai = this.options.openai;
    if (openai && (this.options.openaiOnly || path.startsWith('/v1/'))) {
      await openai.handle(this.openAiExchange(req, res, account, method, path));
      return;
    }
    const { matched, pathKnown, category } = matchRoute(method, path);
    // Before the method check, as Triton's handlers do.
    const restriction = this.options.restricted && failedRestriction(this.options.restricted, category, (name) => {
      const v = req.headers[name];
      return typeof v === 'string' ? v : undefined;
    });
    if (restriction) {
      req.resume();
      this.sendJson(res, 403, { error: httpRestrictedMessage(restriction) });
      return;
    }
    if (!matched) {
      req.resume();
      this.sendJson(res, pathKnown ? 405 : 404, { error: pathKnown ? 'Method Not Allowed' : 'Not Found' });
      return;
    }
    if (matched.route.handle === 'infer') {
      await this.infer(req, res, account, matched.params['model']!, matched.params['version']);
      return;
    }
    if (matched.route.handle === 'generate' || matched.route.handle === 'generate_stream') {
      const abort = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const model = matched.params['model']!;
      const version = matched.params['version'];
      const bytes = await readBody(req, this.jsonLimit(), account);
      const spec = generateSpecOf(this.ctx, model, version);
      const request = generateRequest(await this.parser.planGenerate(bytes, spec, model, this.ctx.limits), model, version, abort.signal);
      if (matched.route.handle === 'generate') {
        this.sendJson(res, 200, await generateOnce(this.ctx, request));
      } else {
        if (this.draining) res.shouldKeepAlive = false;
        await generateStream(this.ctx, request, res, (e) => JSON.stringify({ error: mapError(e).message }));
      }
      return;
    }
    // The load API carries model files as base64 JSON: with --allow-model-file-load it may be as large
    // as any input; every other JSON body has the JSON limit.
    const limit: BodyLimit =
      matched.route.modelFiles && this.ctx.allowModelFileLoad ? { bytes: this.ctx.limits.maxInputBytes, json: false } : this.jsonLimit();
    const json = async (): Promise<unknown> => {
      const bytes = await readBody(req, limit, account);
      return bytes.length === 0 ? undefined : this.parser.parse(bytes);
    };
    const reply: Reply = await matched.route.handle({ method, params: matched.params, json, ctx: this.ctx });
    if (method === 'GET') req.resume();
    if (reply.rawJson !== undefined) {
      await this.send(res, reply.status, { 'content-type': 'application/json' }, [Buffer.from(reply.rawJson)]);
    } else if (reply.json === undefined) {
      if (this.draining) res.shouldKeepAlive = false;
      res.writeHead(reply.status, { 'content-length': 0 });
      res.end();
    } else {
      this.sendJson(res, reply.status, reply.json);
    }
  }

  /** What the OpenAI routes use of this transport: its body reading, parser, replies and cancellation. */
  private openAiExchange(req: IncomingMessage, res: ServerResponse, account: RequestAccount, method: string, path: string): OpenAiExchange {
    const json = this.jsonLimit();
    // A stream's head is written by the route: it closes its connection too while the server stops.
    if (this.draining) res.shouldKeepAlive = false;
    return {
      req,
      res,
      method,
      path,
      readJson: async () => {
        const bytes = await readBody(req, { ...json, tooLarge: openAiTooLarge(json.bytes) }, account);
        return bytes.length === 0 ? undefined : this.parser.parse(bytes);
      },
      signal: connectionSignal(req.socket),
      sendJson: (status, body, headers) => {
        void this.send(res, status, { 'content-type': 'application/json', ...headers }, [Buffer.from(JSON.stringify(body))]).catch(() => res.destroy());
      },
    };
  }

  private async infer(req: IncomingMessage, res: ServerResponse, account: RequestAccount, model: string, version: string | undefined): Promise<void> {
    const recvStartNs = traceNowNs();
    const headerText = req.headers['inference-header-content-length'];
    let headerLength: number | undefined;
    if (headerText !== undefined) {
      headerLength = Number(headerText);
      if (!/^\d+$/.test(String(headerText).trim())) {
        req.resume();
        throw new TransportError(`invalid Inference-Header-Content-Length '${String(headerText)}'`, 400);
      }
    }
    // Without the binary extension the whole body is JSON: read it under the JSON limit. With it,
    // the JSON header is held to that limit before anything is read, the binary part to the input's.
    const jsonLimit = this.jsonLimit();
    if (headerLength !== undefined && headerLength > jsonLimit.bytes) {
      req.resume();
      throw new TransportError(
        `JSON inference header of ${headerLength} bytes exceeds the server's maximum JSON size of ${jsonLimit.bytes} bytes (--http-max-json-size)`,
        413,
      );
    }
    const body = await readBody(req, headerLength === undefined ? jsonLimit : { bytes: this.ctx.limits.maxInputBytes, json: false }, account);
    const recvEndNs = traceNowNs();
    checkNotDecoupled(this.ctx, model, version);
    const signal = connectionSignal(req.socket);
    let parsed: ParsedHttpInfer;
    if (headerLength === 0) {
      parsed = parseInferBody(body, headerLength, model, version, this.ctx, signal);
    } else {
      parseModelVersion(version); // a malformed version is reported before anything in the body
      const jsonLength = checkHeaderLength(headerLength, body.length);
      const binary = body.subarray(jsonLength);
      const plan = await this.parser.planInfer(body.subarray(0, jsonLength), binary.length, model, this.ctx.limits);
      parsed = requestFromPlan(plan, binary, model, version, this.ctx, signal);
    }
    const forwarded = forwardHeaders(parsed.request, this.ctx.headerForward?.http, () => Object.entries(req.headers));
    if (forwarded !== parsed.request) parsed = { ...parsed, request: forwarded };
    // Sampled once the request is known; the receive timestamps are the ones taken above.
    const sampled = this.ctx.tracing.sample(model, (name) => headerValue(req, name));
    if (!sampled) {
      await this.reply(req, res, model, parsed, await this.ctx.api.infer(parsed.request));
      return;
    }
    sampled.capture('HTTP_RECV_START', recvStartNs);
    sampled.capture('HTTP_RECV_END', recvEndNs);
    try {
      const response = await this.ctx.api.infer({ ...parsed.request, trace: sampled.trace });
      await this.reply(req, res, model, parsed, response, sampled);
    } finally {
      sampled.done();
    }
  }

  private async reply(
    req: IncomingMessage,
    res: ServerResponse,
    model: string,
    parsed: ParsedHttpInfer,
    inferred: InferResponse,
    sampled?: SampledTrace,
  ): Promise<void> {
    const response = classified(inferred, parsed.request.outputs, this.ctx, model);
    const reply = buildInferReply(response, parsed, this.ctx);
    const parts = [...reply.json, ...reply.binary];
    const headers: Record<string, string | number> = {};
    if (reply.binary.length > 0) {
      headers['content-type'] = 'application/octet-stream';
      headers['inference-header-content-length'] = reply.jsonLength;
    } else {
      headers['content-type'] = 'application/json';
    }
    sampled?.capture('HTTP_SEND_START', traceNowNs());
    await this.send(res, 200, headers, parts, pickEncoding(req.headers['accept-encoding']));
    sampled?.capture('HTTP_SEND_END', traceNowNs());
  }

  /** Writes one reply; `encoding` (successful inference replies only) compresses the body. */
  private async send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string | number>,
    parts: readonly Uint8Array[],
    encoding?: 'gzip' | 'deflate',
  ): Promise<void> {
    let total = 0;
    for (const p of parts) total += p.byteLength;
    // Node then sends `Connection: close` and ends the connection once the reply is written.
    if (this.draining) res.shouldKeepAlive = false;
    if (encoding) {
      const body = await compress(Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength))), encoding);
      res.writeHead(status, { ...headers, 'content-encoding': encoding, 'content-length': body.length });
      res.end(body);
      return;
    }
    res.writeHead(status, { ...headers, 'content-length': total });
    // One write to the socket for head, JSON and binary parts.
    res.cork();
    for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]);
    res.end(parts[parts.length - 1]);
    res.uncork();
  }

  private sendJson(res: ServerResponse, status: number, json: unknown): void {
    void this.send(res, status, { 'content-type': 'application/json' }, exactJsonParts(json)).catch(() => res.destroy());
  }

  private sendError(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    const m = mapError(error);
    logServerFault(this.ctx.log, `HTTP ${req.method} ${req.url}`, m);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Unread body: drain it so keep-alive stays usable (bounded by the socket closing on 413).
    if (!req.complete) {
      if (m.httpStatus === 413) res.setHeader('connection', 'close');
      req.resume();
    }
    this.sendJson(res, m.httpStatus, { error: m.message });
  }
}

/** How many connections the server holds now. */
function openConnections(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

/** One request header's value (the W3C trace context for sampling). */
function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
