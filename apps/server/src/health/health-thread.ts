/**
 * `--health-port` (beyond Triton): Triton's health endpoints on a listener of their own, served by a
 * worker thread (health-thread-entry.ts) so probes are answered even while the main thread is
 * saturated. The main thread only reports its liveness and readiness to it, four times a second.
 *
 * It keeps the HTTP port's policy: with `--http-use-ssl` it is HTTPS with the same certificate, and a
 * `--http-restricted-api` restriction of `health` requires the same header (403, Triton's message).
 * One exception: with `--http-use-ssl-mutual` it asks for no client certificate, since kubelet's
 * probes cannot present one (Kubernetes probes an HTTPS port without verifying it, and sends the
 * restricted header as `httpHeaders`); it answers nothing but live and ready.
 */
import { Worker } from 'node:worker_threads';
import { type InferenceServerApi } from '@tritium/core';
import { compiledModule } from '@tritium/core/worker';
import type { Restriction } from '../protocol/restricted.ts';
import { loadTlsMaterial, type TlsOptions } from '../protocol/tls.ts';

/** The HTTP port's policy the health port keeps, and its own connection cap. */
export interface HealthPolicy {
  /** `--http-restricted-api`'s `health` restriction. */
  readonly restriction?: Restriction;
  /** `--http-use-ssl` and its PEM files (read at start). */
  readonly tls?: TlsOptions;
  /** `--health-max-connections` (as fitted below the descriptor limit, connection-plan.ts). */
  readonly maxConnections: number;
}

const ENTRY = new URL('./health-thread-entry.ts', import.meta.url);
const REPORT_EVERY_MS = 250;
/** A main thread silent this long is reported neither live nor ready (kubelet's default timeout is 1 s, periods 10 s). */
export const HEALTH_STALE_MS = 10_000;

export class HealthThread {
  private worker: Worker | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Sends the main thread's liveness and readiness to the health thread. */
  private report: () => void = () => undefined;

  constructor(
    private readonly api: Pick<InferenceServerApi, 'isLive' | 'isReady'>,
    private readonly address: string,
    private readonly port: number,
    private readonly policy: HealthPolicy,
  ) {}

  /** Binds the listener (in its thread); resolves with the bound port. */
  async start(): Promise<number> {
    const tls = this.policy.tls && loadTlsMaterial('http', this.policy.tls);
    const worker = new Worker(compiledModule(ENTRY), {
      workerData: {
        address: this.address,
        port: this.port,
        staleMs: HEALTH_STALE_MS,
        maxConnections: this.policy.maxConnections,
        restriction: this.policy.restriction,
        tls: tls && { cert: tls.cert, key: tls.key },
      },
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    this.worker = worker;
    const report = (): void => worker.postMessage({ t: 'state', live: this.api.isLive(), ready: this.api.isReady() });
    this.report = report;
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('message', (m: { t: string; port?: number; code?: string; message?: string }) => {
        if (m.t === 'listening') resolve(m.port!);
        else reject(Object.assign(new Error(m.message ?? 'health listener failed'), { code: m.code }));
      });
    }).catch(async (error: unknown) => {
      await worker.terminate();
      this.worker = undefined;
      throw error;
    });
    report();
    this.timer = setInterval(report, REPORT_EVERY_MS);
    this.timer.unref();
    return port;
  }

  /**
   * Reports now, not at the next period: a stop turns readiness false at once on the main listeners,
   * and a probe on the health port must not read ready for up to a period after that.
   */
  reportNow(): void {
    this.report();
  }

  async stop(): Promise<void> {
    this.report = () => undefined;
    if (this.timer) clearInterval(this.timer);
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
